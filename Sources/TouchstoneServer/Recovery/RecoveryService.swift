import Foundation
import TouchstoneStore
import TouchstoneWebhooks

/// The flows of issue #33: email verification, password reset, sign-in by mailed code, address change and recovery
/// codes.
///
/// Every mail is queued in the unit of work of the change that causes it (the new challenge), and counted against the
/// address's mail limit. The two routes anyone may call with any address (`/v1/password-resets`, `/v1/email-codes`)
/// check their limits, record the request (``DeferredWork``) and answer 202; the address's work is done from the
/// record afterwards: the answer is the same, in content and in time, whether an account exists or not, and a crash
/// after the answer loses nothing.
struct RecoveryService: Sendable {
    let core: ServerCore
    let challenges: EmailChallenges
    let recoveryCodes: RecoveryCodes

    init(core: ServerCore) {
        self.core = core
        self.challenges = EmailChallenges(
            store: core.store,
            keyEncryptionKey: core.mailer.keyEncryptionKey,
            secrets: core.secrets,
            now: core.now,
            maximumAttempts: core.configuration.recovery.maximumCodeAttempts
        )
        self.recoveryCodes = RecoveryCodes(keyEncryptionKey: core.mailer.keyEncryptionKey, randomBytes: core.dependencies.randomBytes)
    }

    var settings: RecoverySettings { self.core.configuration.recovery }
    var mailer: Mailer { self.core.mailer }
    var store: any TouchstoneStore { self.core.store }
    var audit: AuditLog { self.core.audit }

    // MARK: Email verification

    /// The verification challenge and mail of a new account, for the sign-up's unit of work; none when the address
    /// already had its share of mail this hour (the user asks again later with `POST /v1/email/verification`).
    func signUpVerification(for user: UserRecord) async throws -> (EmailChallengeRecord, QueuedMailRecord)? {
        guard try await self.core.limiter.takeMailToken(to: user.email, limit: self.core.configuration.mail.perAddress) == nil else {
            return nil
        }
        return try self.verification(for: user)
    }

    /// The verification challenge and mail of an unverified account, for the caller's unit of work.
    func verification(for user: UserRecord) throws -> (EmailChallengeRecord, QueuedMailRecord) {
        let issued = self.challenges.issue(userId: user.id, purpose: .verifyEmail, email: user.email, ttl: self.settings.verificationTTL)
        let mail = try self.mailer.prepare(.verifyEmail, to: user.email, values: [
            "code": issued.code,
            "link": self.mailer.link("verify-email=\(issued.token)"),
            "validFor": Mailer.duration(self.settings.verificationTTL),
        ])
        return (issued.record, mail)
    }

    /// `POST /v1/email/verification`: a new code and link for the caller's address (the previous ones stop working).
    func resendVerification(_ caller: AuthenticatedSession) async throws {
        guard caller.user.emailVerifiedAt == nil else { throw APIError.emailAlreadyVerified }
        try await self.core.limiter.checkMail(to: caller.user.email, limit: self.core.configuration.mail.perAddress)
        let (challenge, mail) = try self.verification(for: caller.user)
        try await self.store.unitOfWork { tx in
            try await tx.replaceEmailChallenge(challenge)
            try await tx.enqueueMail(mail)
        }
        self.mailer.committed()
    }

    /// Verifies the caller's address with the mailed code.
    func confirmVerification(code: String, caller: AuthenticatedSession) async throws -> UserRecord {
        guard caller.user.emailVerifiedAt == nil else { throw APIError.emailAlreadyVerified }
        let challenge = try await self.rejecting(.verifyEmail, userId: caller.user.id) {
            try await self.challenges.verify(code: code, userId: caller.user.id, purpose: .verifyEmail)
        }
        return try await self.markVerified(challenge)
    }

    /// Verifies an address with the mailed link's token (no session needed: the link may be opened anywhere).
    func confirmVerification(token: String) async throws -> UserRecord {
        let challenge = try await self.rejecting(.verifyEmail, userId: nil) {
            try await self.challenges.verify(token: token, purpose: .verifyEmail)
        }
        return try await self.markVerified(challenge)
    }

    private func markVerified(_ challenge: EmailChallengeRecord) async throws -> UserRecord {
        let event = self.audit.event(.emailVerified, userId: challenge.userId, webhookData: ["email": .string(challenge.email)])
        // The address may have changed since the mail went out: then nothing is verified.
        guard try await self.audit.commit(event, when: { tx in
            try await tx.markEmailVerified(userId: challenge.userId, email: challenge.email, at: self.core.now())
        }) else {
            throw APIError.invalidCode
        }
        guard let user = try await self.store.user(id: challenge.userId) else { throw APIError.invalidCode }
        return user
    }

    // MARK: Password reset

    /// `POST /v1/password-resets`: counts the mail against the address's limit, records the request and answers; the
    /// rest (``fulfil(_:)``) happens after, from the record.
    func requestPasswordReset(email: String) async throws {
        try await self.core.limiter.checkMail(to: email, limit: self.core.configuration.mail.perAddress)
        try await self.promise(Self.passwordResetWork, to: email)
    }

    /// What a reset did.
    struct Reset: Sendable {
        var user: UserRecord
        var revokedSessions: Int
        /// A new session, unless the account has passkeys or device keys (then its user signs in with one, or with the
        /// new password, as usual).
        var session: (token: String, record: SessionRecord)?
    }

    /// `POST /v1/password-resets/confirm` with the address and code.
    func confirmPasswordReset(email: String, code: String, newPassword: InputRules.Password) async throws -> Reset {
        // The hash is made before the code is checked: every attempt costs the same, known address or not.
        let passwordHash = try await self.core.hasher.hash(newPassword)
        try await self.core.limiter.checkAccount("account:\(email)")
        let user = try await self.store.user(email: email)
        let challenge = try await self.rejecting(.passwordReset, userId: user?.id) {
            try await self.challenges.verify(code: code, userId: user?.id, purpose: .passwordReset)
        }
        return try await self.reset(challenge, passwordHash: passwordHash)
    }

    /// `POST /v1/password-resets/confirm` with the link's token.
    func confirmPasswordReset(token: String, newPassword: InputRules.Password) async throws -> Reset {
        let passwordHash = try await self.core.hasher.hash(newPassword)
        let challenge = try await self.rejecting(.passwordReset, userId: nil) {
            try await self.challenges.verify(token: token, purpose: .passwordReset)
        }
        return try await self.reset(challenge, passwordHash: passwordHash)
    }

    private func reset(_ challenge: EmailChallengeRecord, passwordHash: String) async throws -> Reset {
        guard let user = try await self.store.user(id: challenge.userId) else { throw APIError.invalidCode }
        let passkeys = try await self.store.passkeys(userId: user.id)
        let registrations = try await self.store.registrations(userId: user.id)
        let hasStrongCredentials = !passkeys.isEmpty || registrations.contains { $0.status == .active || $0.status == .locked }
        let now = self.core.now()
        let session = hasStrongCredentials ? nil : self.core.sessions.make(for: user, method: .password)
        let notice = try self.mailer.prepare(.passwordChanged, to: user.email, values: ["how": "reset with a code sent to this address"])
        var event = self.audit.event(.passwordReset, userId: user.id)
        if session != nil, let created = self.audit.webhook(
            "session.created",
            data: ["userId": .string(user.id), "method": .string("password"), "registrationId": .null, "passkeyId": .null]
        ) {
            event.webhooks.append(created)
        }
        let recorded = event
        let revoked = try await self.store.unitOfWork { tx -> Int? in
            guard try await tx.updatePassword(userId: user.id, passwordHash: passwordHash) else { return nil }
            let revoked = try await tx.revokeSessions(userId: user.id, keeping: nil, at: now)
            // The code proved the address is the user's.
            _ = try await tx.markEmailVerified(userId: user.id, email: challenge.email, at: now)
            if let session { try await tx.insertSession(session.record) }
            try await tx.enqueueMail(notice)
            try await tx.insertAuditEvent(recorded)
            return revoked
        }
        guard let revoked else { throw APIError.invalidCode }
        self.audit.committed([recorded])
        self.mailer.committed()
        let updated = try await self.store.user(id: user.id) ?? user
        return Reset(user: updated, revokedSessions: revoked, session: session)
    }

    // MARK: Sign-in codes

    /// `POST /v1/email-codes`: counts the mail against the address's limit and answers; the rest happens after.
    func requestEmailCode(email: String) async throws {
        guard self.settings.emailCodes else { throw APIError.emailCodesDisabled }
        try await self.core.limiter.checkMail(to: email, limit: self.core.configuration.mail.perAddress)
        try await self.promise(Self.signInCodeWork, to: email)
    }

    /// `POST /v1/email-codes/verify`: a session with `methods: ["email_code"]` (never enough for privileged operations).
    func verifyEmailCode(email: String, code: String) async throws -> (UserRecord, String, SessionRecord) {
        guard self.settings.emailCodes else { throw APIError.emailCodesDisabled }
        let user = try await self.store.user(email: email)
        return try await self.audit.failures(.emailCodeLogin, userId: user?.id) {
            try await self.core.limiter.checkAccount("account:\(email)", userId: user?.id)
            let challenge = try await self.challenges.verify(code: code, userId: user?.id, purpose: .signInCode)
            guard let user else { throw APIError.invalidCode }
            let (token, session) = self.core.sessions.make(for: user, method: .emailCode)
            let event = self.audit.event(.emailCodeLogin, userId: user.id)
            let now = self.core.now()
            try await self.store.unitOfWork { tx in
                try await tx.insertSession(session)
                // The code proved the address is the user's.
                _ = try await tx.markEmailVerified(userId: user.id, email: challenge.email, at: now)
                try await tx.insertAuditEvent(event)
            }
            self.audit.committed([event])
            return (try await self.store.user(id: user.id) ?? user, token, session)
        }
    }

    // MARK: Email change

    /// `PUT /v1/session/email`: a code and link to the new address (the change waits for them) and a notice to the
    /// current one; needs fresh strong authentication.
    ///
    /// - Throws: 409 `email_taken` when another account has the address, `email_unchanged` when it is the account's;
    ///   the reauthentication and mail limits.
    func requestEmailChange(_ caller: AuthenticatedSession, to email: String) async throws {
        try self.core.sessions.requireFreshStrongAuthentication(caller, within: self.core.reauthenticationWindow)
        guard email != caller.user.email else { throw APIError.emailUnchanged }
        guard try await self.store.user(email: email) == nil else { throw APIError.emailTaken }
        try await self.core.limiter.checkMail(to: email, limit: self.core.configuration.mail.perAddress)
        let issued = self.challenges.issue(userId: caller.user.id, purpose: .changeEmail, email: email, ttl: self.settings.verificationTTL)
        let confirm = try self.mailer.prepare(.emailChange, to: email, values: [
            "code": issued.code,
            "link": self.mailer.link("change-email=\(issued.token)"),
            "validFor": Mailer.duration(self.settings.verificationTTL),
        ])
        let notice = try self.mailer.prepare(.emailChangeNotice, to: caller.user.email, values: ["newEmail": email])
        let event = self.audit.event(.emailChangeRequested, .info, userId: caller.user.id)
        try await self.store.unitOfWork { tx in
            try await tx.replaceEmailChallenge(issued.record)
            try await tx.enqueueMail(confirm)
            try await tx.enqueueMail(notice)
            try await tx.insertAuditEvent(event)
        }
        self.audit.committed([event])
        self.mailer.committed()
    }

    /// `POST /v1/session/email/confirm` with the code (and the session that asked).
    func confirmEmailChange(code: String, caller: AuthenticatedSession) async throws -> UserRecord {
        let challenge = try await self.rejecting(.changeEmail, userId: caller.user.id) {
            try await self.challenges.verify(code: code, userId: caller.user.id, purpose: .changeEmail)
        }
        return try await self.changeEmail(challenge)
    }

    /// `POST /v1/session/email/confirm` with the link's token (no session needed).
    func confirmEmailChange(token: String) async throws -> UserRecord {
        let challenge = try await self.rejecting(.changeEmail, userId: nil) {
            try await self.challenges.verify(token: token, purpose: .changeEmail)
        }
        return try await self.changeEmail(challenge)
    }

    private func changeEmail(_ challenge: EmailChallengeRecord) async throws -> UserRecord {
        let event = self.audit.event(.emailChanged, userId: challenge.userId, webhookData: ["email": .string(challenge.email)])
        let now = self.core.now()
        do {
            guard try await self.audit.commit(event, when: { tx in try await tx.changeEmail(userId: challenge.userId, to: challenge.email, at: now) }) else {
                throw APIError.invalidCode
            }
        } catch let error as StoreError where error == .conflict("") {
            throw APIError.emailTaken
        }
        guard let user = try await self.store.user(id: challenge.userId) else { throw APIError.invalidCode }
        return user
    }

    // MARK: Recovery codes

    /// `POST /v1/recovery-codes`: ten new codes (shown this once), replacing the previous ones; needs fresh
    /// strong authentication.
    func generateRecoveryCodes(_ caller: AuthenticatedSession) async throws -> [String] {
        try self.core.sessions.requireFreshStrongAuthentication(caller, within: self.core.reauthenticationWindow)
        let codes = self.recoveryCodes.generate()
        let hashes = codes.map { self.recoveryCodes.hash(RecoveryCodes.normalize($0)!, userId: caller.user.id) }
        let now = self.core.now()
        try await self.audit.commit(self.audit.event(.recoveryCodesGenerated, userId: caller.user.id)) { tx in
            try await tx.replaceRecoveryCodes(userId: caller.user.id, codeHashes: hashes, at: now)
            return true
        }
        return codes
    }

    /// `POST /v1/recovery-codes/verify`: a session with `methods: ["recovery_code"]`, which may enrol one new device
    /// or passkey; the account's address is told, with the number of codes left.
    ///
    /// - Throws: 400 `invalid_code` for an unknown address, a wrong or used code (the same answer); the limiter's 429s
    ///   (a wrong code counts as a failed credential check of the client address).
    func verifyRecoveryCode(email: String, code: String, client: ClientInfo) async throws -> (UserRecord, String, SessionRecord) {
        let user = try await self.store.user(email: email)
        return try await self.audit.failures(.recoveryCodeLogin, userId: user?.id) {
            try await self.core.limiter.checkFailedCredentials(client: client)
            try await self.core.limiter.checkAccount("account:\(email)", userId: user?.id)
            let now = self.core.now()
            let hash = self.recoveryCodes.hash(code, userId: user?.id ?? "-")
            guard let user, try await self.store.useRecoveryCode(userId: user.id, codeHash: hash, at: now) else {
                try await self.core.limiter.credentialCheckFailed(client: client, userId: user?.id)
                throw APIError.invalidCode
            }
            let (token, session) = self.core.sessions.make(for: user, method: .recoveryCode)
            let remaining = try await self.store.unusedRecoveryCodeCount(userId: user.id)
            let notice = try self.mailer.prepare(.recoveryCodeUsed, to: user.email, values: ["remaining": String(remaining)])
            let event = self.audit.event(.recoveryCodeLogin, userId: user.id)
            try await self.store.unitOfWork { tx in
                try await tx.insertSession(session)
                try await tx.enqueueMail(notice)
                try await tx.insertAuditEvent(event)
            }
            self.audit.committed([event])
            self.mailer.committed()
            return (user, token, session)
        }
    }

    // MARK: Helpers

    // MARK: Work after the answer (issue #44 item 1)

    static let passwordResetWork = "password_reset"
    static let signInCodeWork = "sign_in_code"

    /// Records the address's work before the answer (the same single insert for a known and an unknown address, so the
    /// answer's time tells nothing), and wakes the worker.
    private func promise(_ kind: String, to email: String) async throws {
        try await self.core.deferred.record(kind, subject: email, in: self.store)  // one insert: its own transaction
        self.core.deferred.committed()
    }

    /// Does a recorded request: for an address with an account, a new code (with a link to the web page for a reset),
    /// its mail, the event and the record's deletion in one unit of work; for an unknown address, the record's deletion
    /// only.
    func fulfil(_ lease: DeferredLease) async throws {
        let email = lease.work.subject
        guard let user = try await self.store.user(email: email) else {
            try await lease.finish(in: self.store)
            return
        }
        let purpose: EmailChallengePurpose, kind: MailKind, ttl: TimeInterval, link: String?, type: AuditEventType
        switch lease.work.kind {
        case Self.passwordResetWork:
            (purpose, kind, ttl, link, type) = (.passwordReset, .passwordReset, self.settings.passwordResetTTL, "reset-password", .passwordResetRequested)
        default:
            (purpose, kind, ttl, link, type) = (.signInCode, .signInCode, self.settings.emailCodeTTL, nil, .emailCodeRequested)
        }
        let issued = self.challenges.issue(userId: user.id, purpose: purpose, email: user.email, ttl: ttl)
        var values = ["code": issued.code, "validFor": Mailer.duration(ttl)]
        if let link { values["link"] = self.mailer.link("\(link)=\(issued.token)") }
        let mail = try self.mailer.prepare(kind, to: user.email, values: values)
        let event = self.audit.event(type, .info, userId: user.id)
        try await self.store.unitOfWork { tx in
            try await lease.finish(in: tx)
            try await tx.replaceEmailChallenge(issued.record)
            try await tx.enqueueMail(mail)
            try await tx.insertAuditEvent(event)
        }
        self.audit.committed([event])
        self.mailer.committed()
    }

    /// Runs a code check; a rejection is an audit event (`email_code.rejected`, the purpose as its reason).
    func rejecting<T>(_ purpose: EmailChallengePurpose, userId: String?, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as APIError where error == .invalidCode {
            // The client's answer is the error; an event that cannot be stored is logged by the audit log, not thrown.
            try? await self.audit.record(.emailCodeRejected, .failure, userId: userId, reason: purpose.rawValue)
            throw error
        }
    }
}
