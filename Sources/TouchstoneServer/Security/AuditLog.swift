import Foundation
import Logging
import NIOConcurrencyHelpers
import TouchstoneCrypto
import TouchstoneStore
import TouchstoneWebhooks

/// What the audit trail records. The raw values are the `type` of stored events (and documented in docs/api.md).
enum AuditEventType: String, CaseIterable, Sendable {
    case userCreated = "user.created"
    case userDeleted = "user.deleted"
    case passwordLogin = "password_login"
    case sessionRevoked = "session.revoked"
    case sessionsRevokedAll = "session.revoked_all"
    /// A strong proof made again in a live session (`POST /v1/session/reauthenticate`); the reason names the method.
    case sessionReauthenticated = "session.reauthenticated"
    case registrationStarted = "registration.started"
    case registrationFinished = "registration.finished"
    case registrationReplaced = "registration.replaced"
    case registrationRevoked = "registration.revoked"
    case registrationLocked = "registration.locked"
    case registrationUnlocked = "registration.unlocked"
    case registrationInvalidated = "registration.invalidated"
    case proofKeyAdded = "registration.proof_key_added"
    case biometricLogin = "biometric_login"
    case pinSet = "pin.set"
    case pinRemoved = "pin.removed"
    case pinLogin = "pin_login"
    case pinDisabled = "pin.disabled"
    case pinReenabled = "pin.reenabled"
    case passkeyAdded = "passkey.added"
    case passkeyRemoved = "passkey.removed"
    case passkeyLogin = "passkey_login"
    case passkeyLocked = "passkey.locked"
    case passkeyUnlocked = "passkey.unlocked"
    case cloneWarning = "passkey.clone_warning"
    case passkeyBackupEligibilityChanged = "passkey.backup_eligibility_changed"
    case rateLimited = "rate_limited"
    case addressBlocked = "address.blocked"
    case addressUnblocked = "address.unblocked"
    case policyChanged = "policy.changed"
    case passwordChanged = "password.changed"
    /// The owner removed the account's password (it keeps a passkey or a device key).
    case passwordRemoved = "password.removed"
    case signingKeyCreated = "signing_key.created"
    case signingKeyRotated = "signing_key.rotated"
    case confirmationApproved = "confirmation.approved"
    case confirmationDeclined = "confirmation.declined"
    case confirmationFailed = "confirmation.failed"
    case passkeyPolicyChanged = "user.passkey_policy_changed"
    case clientCreated = "oauth_client.created"
    case clientDeleted = "oauth_client.deleted"
    case clientSecretRotated = "oauth_client.secret_rotated"
    case consentGranted = "oauth.consent_granted"
    case consentDenied = "oauth.consent_denied"
    case consentRevoked = "oauth.consent_revoked"
    case codeReplayed = "oauth.code_replayed"
    case refreshTokenReused = "oauth.refresh_token_reused"
    case backchannelLogoutFailed = "oauth.backchannel_logout_failed"
    case webhookEndpointCreated = "webhook.endpoint_created"
    case webhookEndpointUpdated = "webhook.endpoint_updated"
    case webhookEndpointDeleted = "webhook.endpoint_deleted"
    case webhookSecretRotated = "webhook.secret_rotated"
    case webhookDeliveryFailed = "webhook.delivery_failed"
    case webhookEndpointDisabled = "webhook.endpoint_disabled"
    case emailVerified = "email.verified"
    case passwordResetRequested = "password.reset_requested"
    case passwordReset = "password.reset"
    case emailCodeRequested = "email_code.requested"
    case emailCodeLogin = "email_code_login"
    /// A wrong mailed code or an unusable link for a verification or a reset (the reason names the purpose).
    case emailCodeRejected = "email_code.rejected"
    /// Repeated wrong passwords made an account's password sign-in wait (the throttle's first refusal).
    case passwordThrottled = "password.throttled"
    case recoveryCodesGenerated = "recovery_codes.generated"
    case recoveryCodeLogin = "recovery_code_login"
    case emailChangeRequested = "email.change_requested"
    case emailChanged = "email.changed"
    case signInRequestCreated = "sign_in_request.created"
    case signInRequestApproved = "sign_in_request.approved"
    case signInRequestDeclined = "sign_in_request.declined"
    /// The phone picked another number than the computer showed: the request is declined.
    case signInRequestWrongNumber = "sign_in_request.wrong_number"
    /// The user said they did not ask to sign in.
    case signInRequestNotMe = "sign_in_request.not_me"
    /// A decision that was refused (a bad signature, a locked or revoked registration).
    case signInRequestFailed = "sign_in_request.failed"
    case phoneApprovalLogin = "phone_approval_login"
}

enum AuditOutcome: String, Sendable {
    case success
    case failure
    case info
}

/// Writes audit events, stamped with the time and the client of the current request (``ClientInfo/current``).
///
/// An event is written before the response that reports the action, so an acknowledged action always has its event.
/// Events never contain secrets: only identifiers, codes, addresses and user agents.
struct AuditLog: Sendable {
    let store: any TouchstoneStore
    let secrets: Secrets
    let now: @Sendable () -> Date
    let logger: Logger
    /// Counts stored events (``ServerMetrics/observe(_:)``); nil outside the server (the CLI).
    let metrics: ServerMetrics?
    /// Which webhook types have a subscriber; nil (the CLI): every type is announced.
    let subscriptions: WebhookSubscriptions?
    /// Queues the notices some events send the account's address (``notices``); nil (the CLI): none.
    let mailer: Mailer?
    /// Orders the events of one instance that share a millisecond: ids start with this counter.
    private let sequence = NIOLockedValueBox<UInt64>(0)

    init(
        store: any TouchstoneStore,
        secrets: Secrets,
        now: @escaping @Sendable () -> Date,
        logger: Logger,
        metrics: ServerMetrics? = nil,
        subscriptions: WebhookSubscriptions? = nil,
        mailer: Mailer? = nil
    ) {
        self.mailer = mailer
        self.metrics = metrics
        self.subscriptions = subscriptions
        self.store = store
        self.secrets = secrets
        self.now = now
        self.logger = logger
    }

    /// An event id: a 16-digit hex sequence number (so ids of one instance sort in order) and 8 random bytes.
    private func newEventId() -> String {
        let number = self.sequence.withLockedValue { value -> UInt64 in
            value += 1
            return value
        }
        let digits = String(number, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits + "-" + Hex.encode(self.secrets.randomBytes(8))
    }

    /// Records an event; a failure to store it fails the request (the action is not acknowledged without its event).
    func record(
        _ type: AuditEventType,
        _ outcome: AuditOutcome = .success,
        userId: String? = nil,
        registrationId: String? = nil,
        passkeyId: String? = nil,
        reason: String? = nil,
        webhookData: [String: WebhookValue] = [:],
        notify address: String? = nil
    ) async throws {
        let event = self.event(
            type, outcome, userId: userId, registrationId: registrationId, passkeyId: passkeyId, reason: reason, webhookData: webhookData,
            notify: address)
        try await self.store.insertAuditEvent(event)
        self.committed([event])
    }

    /// Runs `change` and stores `event` in the same transaction when it returns true: the change and its event (and
    /// the event's webhook messages) commit together or not at all.
    @discardableResult
    func commit(_ event: AuditEventRecord, when change: @Sendable (any TouchstoneStore) async throws -> Bool) async throws -> Bool {
        let changed = try await self.store.unitOfWork { tx in
            guard try await change(tx) else { return false }
            try await tx.insertAuditEvent(event)
            return true
        }
        if changed { self.committed([event]) }
        return changed
    }

    /// Counts a wrong device-key signature; the one that reaches `threshold` locks the registration, recorded (with its
    /// `device.locked` and `lockout.started` webhooks and its notice) in the same transaction.
    func recordLockout(registration: RegistrationRecord, threshold: Int64, at now: Date) async throws {
        let address = try await self.store.user(id: registration.userId)?.email
        let event = self.event(.registrationLocked, .info, userId: registration.userId, registrationId: registration.id, notify: address)
        try await self.commit(event) { tx in
            try await tx.recordFailedSignature(registrationId: registration.id, threshold: threshold, at: now)
        }
    }

    /// Reports events a caller stored in a transaction of its own, once it committed.
    func committed(_ events: [AuditEventRecord]) {
        if events.contains(where: { !$0.mails.isEmpty }) { self.mailer?.committed() }
        guard let metrics = self.metrics else { return }
        for event in events { metrics.observe(event) }
    }

    /// The notices events send to the account's address (docs/recovery.md, "Notices"): the mail and its values.
    static let notices: [AuditEventType: (MailKind, [String: String])] = [
        .passwordChanged: (.passwordChanged, ["how": "changed"]),
        .passwordRemoved: (.passwordChanged, ["how": "removed"]),
        .userDeleted: (.accountDeleted, [:]),
        .registrationFinished: (.deviceEnrolled, [:]),
        .passkeyAdded: (.passkeyAdded, [:]),
        .registrationLocked: (.lockout, ["what": "biometric sign-in on a device", "unlock": "sign in with your password and unlock the device in your list."]),
        .passkeyLocked: (.lockout, ["what": "a passkey", "unlock": "sign in with your password and unlock the passkey in your list."]),
        .pinDisabled: (.lockout, ["what": "the app PIN of a device", "unlock": "sign in with your password: that turns the PIN back on."]),
        .passwordThrottled: (.lockout, ["what": "password sign-in", "unlock": "wait a few minutes, or sign in another way (a passkey, a device, a code by mail)."]),
    ]

    /// An event stamped like ``record(_:_:userId:registrationId:passkeyId:reason:)``'s, for a caller that stores it in
    /// a transaction of its own (a sign-in and its event commit together).
    func event(
        _ type: AuditEventType,
        _ outcome: AuditOutcome = .success,
        userId: String? = nil,
        registrationId: String? = nil,
        passkeyId: String? = nil,
        reason: String? = nil,
        webhookData: [String: WebhookValue] = [:],
        notify address: String? = nil
    ) -> AuditEventRecord {
        let client = ClientInfo.current
        var record = AuditEventRecord(
            id: self.newEventId(),
            occurredAt: self.now(),
            type: type.rawValue,
            outcome: outcome.rawValue,
            userId: userId,
            registrationId: registrationId,
            passkeyId: passkeyId,
            clientAddress: client.address,
            userAgent: client.userAgent,
            reason: reason
        )
        record.webhooks = WebhookEvents.outbox(
            for: record, type: type, outcome: outcome, extra: webhookData, randomBytes: self.secrets.randomBytes,
            announcing: { self.subscriptions?.announces($0) ?? true })
        if let address, let mailer = self.mailer, let (kind, values) = Self.notices[type] {
            do {
                record.mails = [try mailer.prepare(kind, to: address, values: values)]
            } catch {
                // A notice that cannot be written must not stop the change it reports.
                self.logger.error("mail: the \(kind.rawValue) notice could not be prepared: \(error)")
            }
        }
        return record
    }

    /// A webhook event of `type` for an audit event stamped now (a second event one change announces: a sign-up's
    /// session).
    func webhook(_ type: String, data: [String: WebhookValue]) -> WebhookOutboxEvent? {
        guard self.subscriptions?.announces(type) ?? true else { return nil }
        return WebhookEvents.event(type, data: data, at: self.now(), randomBytes: self.secrets.randomBytes)
    }

    /// Records a failed attempt on the way to reporting it: the attempt's own error is what the client sees, so a
    /// failure to store this event is logged rather than thrown.
    func recordFailure(
        _ type: AuditEventType,
        error: any Error,
        userId: String? = nil,
        registrationId: String? = nil,
        passkeyId: String? = nil
    ) async {
        let reason = (error as? APIError)?.code ?? "internal_error"
        var userId = userId
        if userId == nil, let registrationId {
            userId = try? await self.store.registration(id: registrationId)?.userId
        }
        if userId == nil, let passkeyId {
            userId = try? await self.store.passkey(id: passkeyId)?.userId
        }
        do {
            try await self.record(type, .failure, userId: userId, registrationId: registrationId, passkeyId: passkeyId, reason: reason)
        } catch {
            self.logger.error("audit event \(type.rawValue) could not be stored: \(error)")
        }
    }

    /// Runs `body`; when it throws, records `type` as a failure with the error's code, then rethrows.
    func failures<T>(
        _ type: AuditEventType,
        userId: String? = nil,
        registrationId: String? = nil,
        passkeyId: String? = nil,
        _ body: () async throws -> T
    ) async throws -> T {
        do {
            return try await body()
        } catch {
            await self.recordFailure(type, error: error, userId: userId, registrationId: registrationId, passkeyId: passkeyId)
            throw error
        }
    }
}
