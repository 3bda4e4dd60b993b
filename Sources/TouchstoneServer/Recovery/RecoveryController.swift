import Foundation
import Hummingbird
import TouchstoneStore
import TouchstoneWebAuthn

/// Email verification, password reset, sign-in by mailed code, address change and recovery codes (issue #33;
/// docs/recovery.md): `POST /v1/email/verification`, `POST /v1/email/verification/confirm`, `POST /v1/password-resets`,
/// `POST /v1/password-resets/confirm` (a new password or a new passkey), `POST /v1/password-resets/passkey-options`,
/// `POST /v1/email-codes`, `POST /v1/email-codes/verify`, `PUT /v1/session/email`,
/// `POST /v1/session/email/confirm`, `POST /v1/recovery-codes`, `POST /v1/recovery-codes/verify`.
struct RecoveryController {
    typealias Context = TouchstoneRequestContext

    let service: RecoveryService
    /// A reset completed with a new passkey.
    let passkeyReset: PasskeyReset

    func addRoutes(to router: Router<Context>, authenticator: SessionAuthenticator) {
        let mail = router.group().add(middleware: AddressRateLimitMiddleware(limiter: self.service.core.limiter, group: "mail"))
        mail.group("/v1/email/verification").add(middleware: authenticator).post(use: self.resendVerification)
        mail.post("/v1/email/verification/confirm", use: self.confirmVerification)
        mail.post("/v1/password-resets", use: self.requestPasswordReset)
        mail.post("/v1/password-resets/confirm", use: self.confirmPasswordReset)
        mail.post("/v1/password-resets/passkey-options", use: self.passkeyResetOptions)
        mail.post("/v1/email-codes", use: self.requestEmailCode)
        mail.post("/v1/email-codes/verify", use: self.verifyEmailCode)
        mail.group("/v1/session/email").add(middleware: authenticator).put(use: self.requestEmailChange)
        mail.post("/v1/session/email/confirm", use: self.confirmEmailChange)
        router.group("/v1/recovery-codes").add(middleware: authenticator).post(use: self.generateRecoveryCodes)
        router.group().add(middleware: AddressRateLimitMiddleware(limiter: self.service.core.limiter, group: "password"))
            .post("/v1/recovery-codes/verify", use: self.verifyRecoveryCode)
    }

    /// `{"status": "queued"}`: what every mail-sending route answers with 202, whatever happens to the mail.
    struct Queued: Encodable { var status = "queued" }

    struct UserOnly: Encodable { var user: UserResource }

    // MARK: Email verification

    @Sendable func resendVerification(request: Request, context: Context) async throws -> JSONResponse<Queued> {
        try await self.service.resendVerification(try context.requireIdentity())
        return JSONResponse(.accepted, Queued())
    }

    /// `{"code"}` with the session whose address it verifies, or `{"token"}` (the link's) without one.
    struct ConfirmInput: Decodable {
        var code: String?
        var token: String?

        enum CodingKeys: CodingKey { case code, token }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.code = try container.decodeStringIfPresent(.code, maxLength: 64) { (text) throws(FieldError) in try RecoveryInput.code(text, field: "code") }
            self.token = try container.decodeStringIfPresent(.token, maxLength: 128) { (text) throws(FieldError) in try RecoveryInput.token(text, field: "token") }
            guard (self.code == nil) != (self.token == nil) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "give either 'code' or 'token'", underlyingError: FieldError(message: "give either 'code' (with a session) or 'token' (from the link), not both")))
            }
        }
    }

    @Sendable func confirmVerification(request: Request, context: Context) async throws -> JSONResponse<UserOnly> {
        try await self.confirm(request, context, byToken: self.service.confirmVerification(token:), byCode: self.service.confirmVerification(code:caller:))
    }

    /// A confirmation by the link's token (no session), or by the code with the bearer session it was sent for.
    private func confirm(
        _ request: Request,
        _ context: Context,
        byToken: (String) async throws -> UserRecord,
        byCode: (String, AuthenticatedSession) async throws -> UserRecord
    ) async throws -> JSONResponse<UserOnly> {
        let input = try await request.decodeJSON(as: ConfirmInput.self, context: context)
        let user: UserRecord
        if let token = input.token {
            user = try await byToken(token)
        } else {
            let caller = try await self.service.core.authenticator.authenticate(request)
            user = try await byCode(input.code ?? "", caller)
        }
        return JSONResponse(.ok, UserOnly(user: UserResource(user)))
    }

    // MARK: Password reset

    struct EmailInput: Decodable {
        var email: String

        enum CodingKeys: CodingKey { case email }

        init(from decoder: any Decoder) throws {
            self.email = try decoder.container(keyedBy: CodingKeys.self).decodeEmail(.email)
        }
    }

    @Sendable func requestPasswordReset(request: Request, context: Context) async throws -> JSONResponse<Queued> {
        let input = try await request.decodeJSON(as: EmailInput.self, context: context)
        try await self.service.requestPasswordReset(email: input.email)
        return JSONResponse(.accepted, Queued())
    }

    /// `{"email", "code"}` or `{"token"}`: what proves a reset.
    struct ResetProofInput: Decodable {
        var proof: PasskeyReset.Proof

        enum CodingKeys: CodingKey { case email, code, token }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let email = try container.decodeEmailIfPresent(.email)
            let code = try container.decodeStringIfPresent(.code, maxLength: 64) { (text) throws(FieldError) in try RecoveryInput.code(text, field: "code") }
            let token = try container.decodeStringIfPresent(.token, maxLength: 128) { (text) throws(FieldError) in try RecoveryInput.token(text, field: "token") }
            switch (email, code, token) {
            case (.some(let email), .some(let code), nil): self.proof = .code(email: email, code: code)
            case (nil, nil, .some(let token)): self.proof = .token(token)
            default:
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "", underlyingError: FieldError(message: "give 'email' and 'code', or 'token' (from the link), with 'newPassword' or 'passkey'")))
            }
        }
    }

    /// The proof with `{"newPassword"}`, or with `{"passkey", "name"?}` (a registration response over the options of
    /// `/v1/password-resets/passkey-options`).
    struct ResetInput: Decodable {
        enum Completion { case password(InputRules.Password), passkey(RegistrationResponseJSON, name: String?) }
        var proof: PasskeyReset.Proof
        var completion: Completion

        enum CodingKeys: CodingKey { case newPassword, passkey, name }

        init(from decoder: any Decoder) throws {
            self.proof = try ResetProofInput(from: decoder).proof
            let container = try decoder.container(keyedBy: CodingKeys.self)
            switch (container.contains(.newPassword), container.contains(.passkey)) {
            case (true, false): self.completion = .password(try container.decodePassword(.newPassword, isNew: true))
            case (false, true):
                self.completion = .passkey(
                    try container.decode(RegistrationResponseJSON.self, forKey: .passkey), name: try container.decodeDisplayTextIfPresent(.name))
            default:
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "", underlyingError: FieldError(message: "give 'newPassword' or 'passkey', not both")))
            }
        }
    }

    struct ResetOutput: Encodable {
        var user: UserResource
        var revokedSessions: Int
        /// Absent when the account has passkeys or device keys: its user signs in again.
        var session: SessionResource?
    }

    @Sendable func confirmPasswordReset(request: Request, context: Context) async throws -> JSONResponse<ResetOutput> {
        let input = try await request.decodeJSON(as: ResetInput.self, context: context)
        let reset: RecoveryService.Reset
        switch (input.proof, input.completion) {
        case (.token(let token), .password(let password)):
            reset = try await self.service.confirmPasswordReset(token: token, newPassword: password)
        case (.code(let email, let code), .password(let password)):
            reset = try await self.service.confirmPasswordReset(email: email, code: code, newPassword: password)
        case (let proof, .passkey(let response, let name)):
            reset = try await self.passkeyReset.confirm(proof, response: response, name: name)
        }
        return JSONResponse(.ok, ResetOutput(
            user: UserResource(reset.user),
            revokedSessions: reset.revokedSessions,
            session: reset.session.map { SessionResource(token: $0.token, record: $0.record) }
        ))
    }

    /// `POST /v1/password-resets/passkey-options`: creation options for completing the reset with a new passkey.
    @Sendable func passkeyResetOptions(request: Request, context: Context) async throws -> JSONResponse<CreationOptionsJSON> {
        let input = try await request.decodeJSON(as: ResetProofInput.self, context: context)
        return JSONResponse(.ok, try await self.passkeyReset.options(input.proof))
    }

    // MARK: Sign-in codes

    @Sendable func requestEmailCode(request: Request, context: Context) async throws -> JSONResponse<Queued> {
        let input = try await request.decodeJSON(as: EmailInput.self, context: context)
        try await self.service.requestEmailCode(email: input.email)
        return JSONResponse(.accepted, Queued())
    }

    struct VerifyInput: Decodable {
        var email: String
        var code: String

        enum CodingKeys: CodingKey { case email, code }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.email = try container.decodeEmail(.email)
            self.code = try container.decodeString(.code, maxLength: 64) { (text) throws(FieldError) in try RecoveryInput.code(text, field: "code") }
        }
    }

    @Sendable func verifyEmailCode(request: Request, context: Context) async throws -> JSONResponse<SignedIn> {
        let input = try await request.decodeJSON(as: VerifyInput.self, context: context)
        let (user, token, session) = try await self.service.verifyEmailCode(email: input.email, code: input.code)
        return JSONResponse(.ok, SignedIn(user: UserResource(user), session: SessionResource(token: token, record: session)))
    }
}

extension RecoveryController {
    @Sendable func requestEmailChange(request: Request, context: Context) async throws -> JSONResponse<Queued> {
        let input = try await request.decodeJSON(as: EmailInput.self, context: context)
        try await self.service.requestEmailChange(try context.requireIdentity(), to: input.email)
        return JSONResponse(.accepted, Queued())
    }

    @Sendable func confirmEmailChange(request: Request, context: Context) async throws -> JSONResponse<UserOnly> {
        try await self.confirm(request, context, byToken: self.service.confirmEmailChange(token:), byCode: self.service.confirmEmailChange(code:caller:))
    }

    struct Codes: Encodable { var codes: [String] }

    @Sendable func generateRecoveryCodes(request: Request, context: Context) async throws -> JSONResponse<Codes> {
        let codes = try await self.service.generateRecoveryCodes(try context.requireIdentity())
        // Shown once: no cache keeps them.
        return JSONResponse(.created, Codes(codes: codes), headers: [.cacheControl: "no-store"])
    }

    struct RecoveryCodeInput: Decodable {
        var email: String
        var code: String

        enum CodingKeys: CodingKey { case email, code }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.email = try container.decodeEmail(.email)
            self.code = try container.decodeString(.code, maxLength: 64) { (text) throws(FieldError) in
                guard let code = RecoveryCodes.normalize(text) else {
                    throw FieldError(message: "field 'code' must be a recovery code: ten letters and digits, as xxxxx-xxxxx")
                }
                return code
            }
        }
    }

    @Sendable func verifyRecoveryCode(request: Request, context: Context) async throws -> JSONResponse<SignedIn> {
        let input = try await request.decodeJSON(as: RecoveryCodeInput.self, context: context)
        let (user, token, session) = try await self.service.verifyRecoveryCode(email: input.email, code: input.code, client: context.client)
        return JSONResponse(.ok, SignedIn(user: UserResource(user), session: SessionResource(token: token, record: session)))
    }
}

/// The shapes of what users copy from a mail: refused with 400 before anything is counted.
enum RecoveryInput {
    /// Six ASCII digits, as `123456`, `123 456` or `123-456` (how people copy them from a mail).
    static func code(_ text: String, field: String) throws(FieldError) -> String {
        var digits = text
        if digits.utf8.count == 7, let middle = digits.dropFirst(3).first, middle == " " || middle == "-" {
            digits.remove(at: digits.index(digits.startIndex, offsetBy: 3))
        }
        guard digits.utf8.count == 6, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw FieldError(message: "field '\(field)' must be the 6 digits of the mailed code")
        }
        return digits
    }

    /// A link's token: 43 base64url characters (32 bytes).
    static func token(_ text: String, field: String) throws(FieldError) -> String {
        guard text.utf8.count == 43, text.utf8.allSatisfy({ byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
        }) else {
            throw FieldError(message: "field '\(field)' is not the token of a Touchstone link (43 base64url characters)")
        }
        return text
    }
}
