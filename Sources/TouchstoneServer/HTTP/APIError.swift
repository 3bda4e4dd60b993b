public import Foundation
import TouchstoneWebhooks
public import HTTPTypes
public import Hummingbird
import TouchstoneWebAuthn

/// An error as the API reports it: a status, a stable snake_case code, and a message for humans.
///
/// Every error response has the body `{"error": {"code": "...", "message": "..."}}`.
public struct APIError: Error, HTTPResponseError, Sendable, Hashable {
    public let status: HTTPResponse.Status
    public let code: String
    public let message: String
    /// Extra response headers (`Retry-After`, ...).
    public var headers: HTTPFields = [:]

    public init(_ status: HTTPResponse.Status, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = ErrorBody(error: .init(code: self.code, message: self.message))
        let data = try JSONEncoder().encode(body)
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: self.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.status == rhs.status && lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.status.code)
        hasher.combine(self.code)
    }

    struct ErrorBody: Codable {
        struct Detail: Codable {
            var code: String
            var message: String
        }
        var error: Detail
    }
}

// MARK: - The catalogue

extension APIError {
    static func invalidRequest(_ message: String) -> APIError { .init(.badRequest, code: "invalid_request", message: message) }
    static func payloadTooLarge(limit: Int) -> APIError {
        .init(.contentTooLarge, code: "payload_too_large", message: "request body is larger than \(limit) bytes")
    }
    static let notFound = APIError(.notFound, code: "not_found", message: "no such resource")
    /// A known path asked with a method it does not have; `Allow` lists the ones it has.
    static func methodNotAllowed(_ method: HTTPRequest.Method, allowed: [HTTPRequest.Method]) -> APIError {
        let list = allowed.map(\.rawValue).joined(separator: ", ")
        var error = APIError(.methodNotAllowed, code: "method_not_allowed", message: "\(method.rawValue) is not allowed here; use \(list)")
        error.headers[.allow] = list
        return error
    }
    static let emailTaken = APIError(.conflict, code: "email_taken", message: "an account with this email already exists")
    /// A mailed code or link that is wrong, expired, replaced, used, or killed by too many wrong codes (one answer for
    /// all, and for unknown addresses: it tells nothing about the account).
    static let invalidCode = APIError(
        .badRequest,
        code: "invalid_code",
        message: "the code or link is wrong, expired or already used; after 5 wrong codes ask for a new one"
    )
    static let emailUnchanged = APIError(.conflict, code: "email_unchanged", message: "this is already the account's address")
    static let emailAlreadyVerified = APIError(.conflict, code: "email_already_verified", message: "the account's address is already verified")
    static let emailNotVerified = APIError(
        .forbidden,
        code: "email_not_verified",
        message: "verify the account's email address first (POST /v1/email/verification sends a new code)"
    )
    static let signUpDisabled = APIError(.forbidden, code: "sign_up_disabled", message: "this server does not let people create accounts")
    static let emailCodesDisabled = APIError(.forbidden, code: "email_codes_disabled", message: "sign-in by mailed code is turned off on this server")
    static let invalidCredentials = APIError(.unauthorized, code: "invalid_credentials", message: "email or password is incorrect")
    static func unauthenticated(_ message: String = "a valid session token is required") -> APIError {
        .init(.unauthorized, code: "unauthenticated", message: message)
    }
    static let reauthenticationRequired = APIError(
        .forbidden,
        code: "reauthentication_required",
        message: "this operation needs a password, passkey or device-key sign-in within the last few minutes (POST /v1/session/reauthenticate)"
    )
    static let lastCredential = APIError(
        .conflict,
        code: "last_credential",
        message: "this is the account's last way to sign in (no password, no other passkey or device key); add another first"
    )
    static let passwordNotSet = APIError(.conflict, code: "password_not_set", message: "this account has no password")
    static let recoveryEnrolmentUsed = APIError(
        .forbidden,
        code: "reauthentication_required",
        message: "a mailed code or a recovery code enrols one device or passkey; re-authenticate to enrol more"
    )
    static let biometricsDisabled = APIError(.forbidden, code: "biometrics_disabled", message: "biometric login is disabled on this server")
    static func invalidPublicKey(_ message: String) -> APIError { .init(.badRequest, code: "invalid_public_key", message: message) }
    static func unsupportedAlgorithm(_ message: String) -> APIError {
        .init(.badRequest, code: "unsupported_algorithm", message: message)
    }
    static let deviceEnrolledForAnotherUser = APIError(
        .conflict,
        code: "device_enrolled_for_another_user",
        message: "this device is already enrolled for biometric login by another account"
    )
    static let registrationNotFound = APIError(.notFound, code: "registration_not_found", message: "no such registration")
    static let registrationRevoked = APIError(
        .unauthorized,
        code: "registration_revoked",
        message: "this registration was revoked, replaced or invalidated; delete the local key and enable biometrics again"
    )
    static let registrationLocked = APIError(
        .init(code: 423, reasonPhrase: "Locked"),
        code: "registration_locked",
        message: "too many failed signatures: sign in with your password, then unlock this device or enable biometrics again"
    )
    static let registrationNotLocked = APIError(.conflict, code: "registration_not_locked", message: "this registration is not locked")
    static let invalidSignature = APIError(.unauthorized, code: "invalid_signature", message: "the signature does not verify")
    static let challengeExpired = APIError(.unauthorized, code: "challenge_expired", message: "the challenge has expired; start again")
    static let challengeNotFound = APIError(
        .unauthorized,
        code: "challenge_not_found",
        message: "unknown or already used challenge, or one issued for another registration or account; start again"
    )
    static func invalidPasskeyRegistration(_ error: any Error) -> APIError {
        .init(.badRequest, code: "invalid_passkey_registration", message: Self.webAuthnMessage(error))
    }
    /// The authenticator's model is refused by metadata policy: a known compromise, or not FIDO certified where only
    /// certified authenticators are accepted.
    static func authenticatorNotAllowed(_ error: any Error) -> APIError {
        .init(.forbidden, code: "authenticator_not_allowed", message: Self.webAuthnMessage(error))
    }
    static let authenticatorMetadataUnavailable = APIError(
        .serviceUnavailable,
        code: "authenticator_metadata_unavailable",
        message: "only certified authenticators are accepted and no authenticator metadata is loaded yet; try again later"
    )
    static func invalidPasskeyAssertion(_ error: any Error) -> APIError {
        .init(.unauthorized, code: "invalid_passkey_assertion", message: Self.webAuthnMessage(error))
    }
    static func invalidAppAttest(_ message: String) -> APIError { .init(.badRequest, code: "invalid_app_attest", message: message) }
    static let appAttestDisabled = APIError(.forbidden, code: "app_attest_disabled", message: "App Attest is not configured on this server")
    static let appAttestRequired = APIError(
        .forbidden,
        code: "app_attest_required",
        message: "this server enrols only devices that prove a genuine app with App Attest; send 'appAttest'"
    )
    static func invalidKeyAttestation(_ message: String) -> APIError {
        .init(.badRequest, code: "invalid_key_attestation", message: message)
    }
    static let androidKeyAttestationDisabled = APIError(
        .forbidden,
        code: "android_key_attestation_disabled",
        message: "Android key attestation is not configured on this server (TOUCHSTONE_ANDROID_APPS)"
    )
    static let androidKeyAttestationRequired = APIError(
        .forbidden,
        code: "android_key_attestation_required",
        message: "this server enrols only devices that prove their key with Android key attestation; send 'keyAttestation'"
    )
    static let deviceAttestationRequired = APIError(
        .forbidden,
        code: "device_attestation_required",
        message: "this server enrols only attested devices; send 'appAttest' (iOS) or 'keyAttestation' (Android)"
    )
    static let attestationStatusUnavailable = APIError(
        .serviceUnavailable,
        code: "attestation_status_unavailable",
        message: "the Android attestation status list cannot be read; try again later"
    )
    static let appAttestKeyExists = APIError(.conflict, code: "app_attest_key_exists", message: "this App Attest key is already registered")
    static let passkeyAlreadyRegistered = APIError(.conflict, code: "passkey_already_registered", message: "this passkey is already registered")
    static let passkeyNotFound = APIError(.notFound, code: "passkey_not_found", message: "no such passkey")
    static let deviceBoundPasskeyRequired = APIError(
        .forbidden,
        code: "device_bound_passkey_required",
        message: "this account accepts only device-bound passkeys (a security key or a platform passkey that is not synced)"
    )
    static let passkeyLocked = APIError(
        .init(code: 423, reasonPhrase: "Locked"),
        code: "passkey_locked",
        message: "too many failed assertions with this passkey: sign in another way, then unlock it"
    )
    static let passkeyNotLocked = APIError(.conflict, code: "passkey_not_locked", message: "this passkey is not locked")
    /// A sign-in with a credential the server does not know (deleted, or never registered here).
    static let passkeyNotFoundForLogin = APIError(.unauthorized, code: "passkey_not_found", message: "this passkey is not registered; sign in another way")

    /// "step_code: reason" for a WebAuthn verification failure: which step failed is what a developer needs.
    private static func webAuthnMessage(_ error: any Error) -> String {
        if let error = error as? TouchstoneWebAuthn.WebAuthnError { return "\(error.code.rawValue): \(error.reason)" }
        return "the response could not be verified"
    }

    static let storageUnavailable = APIError(
        .serviceUnavailable,
        code: "storage_unavailable",
        message: "the database is unavailable; try again shortly"
    )
    static let internalError = APIError(.internalServerError, code: "internal_error", message: "an unexpected error occurred")
}

extension APIError {
    /// 429 with `Retry-After` in whole seconds (at least 1).
    static func rateLimited(retryAfter: TimeInterval) -> APIError {
        var error = APIError(.tooManyRequests, code: "rate_limited", message: "too many requests; try again later")
        error.headers[.retryAfter] = String(max(1, Int(retryAfter.rounded(.up))))
        return error
    }

    /// 429 with `Retry-After`: too many wrong passwords for this account.
    static func loginThrottled(retryAfter: TimeInterval) -> APIError {
        var error = APIError(
            .tooManyRequests,
            code: "login_throttled",
            message: "too many failed sign-ins for this account; wait before trying again"
        )
        error.headers[.retryAfter] = String(max(1, Int(retryAfter.rounded(.up))))
        return error
    }
}

extension APIError {
    static let pinNotSet = APIError(.conflict, code: "pin_not_set", message: "this registration has no app PIN")
    static let invalidPin = APIError(.unauthorized, code: "invalid_pin", message: "the PIN is incorrect")
    static let pinDisabled = APIError(
        .init(code: 423, reasonPhrase: "Locked"),
        code: "pin_disabled",
        message: "too many wrong PINs: sign in with your password to use the PIN again"
    )
    static let adminKeyRequired = APIError(
        .forbidden,
        code: "admin_key_required",
        message: "this endpoint needs an admin key (touchstone admin create-key)"
    )
    static let emailMismatch = APIError(
        .badRequest, code: "email_mismatch", message: "type the account's email address to confirm (field 'confirmEmail')")
    static let sessionNotFound = APIError(.notFound, code: "session_not_found", message: "no such session, or it has ended")
    static let userNotFound = APIError(.notFound, code: "user_not_found", message: "no such user")
    static let clientNotFound = APIError(.notFound, code: "client_not_found", message: "no such client")
    static let webhookNotFound = APIError(.notFound, code: "webhook_not_found", message: "no such webhook endpoint")
    static let webhookDeliveryNotFound = APIError(.notFound, code: "delivery_not_found", message: "this endpoint has no such event")
    static let webhookDisabled = APIError(
        .conflict,
        code: "webhook_disabled",
        message: "this webhook endpoint is disabled; enable it first (PATCH {\"enabled\": true})"
    )
    static func invalidWebhook(_ error: WebhookError) -> APIError { .init(.badRequest, code: error.code.rawValue, message: error.message) }
    static let grantNotFound = APIError(.notFound, code: "grant_not_found", message: "you have not allowed this client anything")
    static let publicClientHasNoSecret = APIError(
        .conflict,
        code: "public_client_has_no_secret",
        message: "a public client authenticates with PKCE alone and has no secret to rotate"
    )
    static let addressNotBlocked = APIError(.notFound, code: "address_not_blocked", message: "that address is not blocked")
    static let confirmationNotFound = APIError(.notFound, code: "confirmation_not_found", message: "no such confirmation")
    static let confirmationNotPending = APIError(
        .conflict,
        code: "confirmation_not_pending",
        message: "this confirmation was already approved or declined"
    )
    static let confirmationExpired = APIError(.gone, code: "confirmation_expired", message: "this confirmation has expired")
    static let registrationNotAllowed = APIError(
        .forbidden,
        code: "registration_not_allowed",
        message: "this key or passkey belongs to another user"
    )
    static let noPasskeys = APIError(.conflict, code: "no_passkeys", message: "this user has no passkeys")

    // Sign-ins approved on a phone (issue #34).
    static let signInRequestNotFound = APIError(
        .notFound,
        code: "sign_in_request_not_found",
        message: "no such sign-in request (or not for this token, secret or device)"
    )
    static let signInRequestNotPending = APIError(
        .conflict,
        code: "sign_in_request_not_pending",
        message: "this sign-in request was already approved or declined"
    )
    static let signInRequestExpired = APIError(.gone, code: "sign_in_request_expired", message: "this sign-in request has expired")
    static let tooManyPendingRequests = APIError(
        .tooManyRequests,
        code: "too_many_pending_requests",
        message: "this address has 3 sign-in requests waiting; approve, decline or let them expire first"
    )
    static let wrongNumber = APIError(
        .conflict,
        code: "wrong_number",
        message: "that is not the number the computer shows; the request is declined (start again on the computer)"
    )
    static let invalidDeviceCredential = APIError(
        .unauthorized,
        code: "invalid_device_credential",
        message: "the device credential is unknown, or its registration was revoked"
    )
    static let phoneApprovalPaused = APIError(
        .forbidden,
        code: "phone_approval_paused",
        message: "phone approvals are paused for this account after a request was reported as not made by its owner"
    )
    /// A decision whose signature does not verify: 400 on the phone-approval routes (the request stays pending).
    static let invalidDecisionSignature = APIError(
        .badRequest,
        code: "invalid_signature",
        message: "the signature does not verify over the request's payload and this decision"
    )
}
