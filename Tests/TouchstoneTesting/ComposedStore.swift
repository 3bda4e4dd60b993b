public import Foundation
public import TouchstoneStore

/// A store made of one implementation per aggregate, each replaceable: a test double replaces the aggregate it is
/// about (a racing `ChallengeLedger`, a failing `AuditStore`) and keeps a real store for everything else, instead of
/// listing every method of ``TouchstoneStore``. The lifecycle (migrate, health, shutdown, purge, units of work) is the
/// base store's.
///
/// Written out from the protocols in `Sources/TouchstoneStore/Stores/`: a method added there is added here (the
/// compiler says so).
public struct ComposedStore: TouchstoneStore {
    public let base: any TouchstoneStore
    public var users: any UserStore
    public var sessions: any SessionStore
    public var registrationStore: any RegistrationStore
    public var challenges: any ChallengeLedger
    public var passkeyStore: any PasskeyStore
    public var appAttestKeys: any AppAttestKeyStore
    public var audit: any AuditStore
    public var abuse: any AbuseStore
    public var signingKeys: any SigningKeyStore
    public var confirmations: any ConfirmationStore
    public var adminKeys: any AdminKeyStore
    public var settings: any SettingStore
    public var metadata: any MetadataStore
    public var clientStore: any OAuthClientStore
    public var authorizations: any AuthorizationStore
    public var webhooks: any WebhookStore
    public var mailQueue: any MailQueueStore
    public var recovery: any RecoveryStore
    public var phoneApproval: any PhoneApprovalStore
    public var signUps: any SignUpStore
    public var dpop: any DPoPStore
    public var deferredWork: any DeferredWorkStore

    /// Every aggregate the base store's.
    public init(_ base: any TouchstoneStore) {
        self.base = base
        self.users = base
        self.sessions = base
        self.registrationStore = base
        self.challenges = base
        self.passkeyStore = base
        self.appAttestKeys = base
        self.audit = base
        self.abuse = base
        self.signingKeys = base
        self.confirmations = base
        self.adminKeys = base
        self.settings = base
        self.metadata = base
        self.clientStore = base
        self.authorizations = base
        self.webhooks = base
        self.mailQueue = base
        self.recovery = base
        self.phoneApproval = base
        self.signUps = base
        self.dpop = base
        self.deferredWork = base
    }

    public func migrate() async throws { try await self.base.migrate() }
    /// The base store's: a composed SQLite store still serves one process.
    public var servesOneProcess: Bool { self.base.servesOneProcess }
    public func checkHealth() async throws { try await self.base.checkHealth() }
    public func shutdown() async throws { try await self.base.shutdown() }
    public func purgeExpired(before cutoff: Date) async throws -> PurgeResult { try await self.base.purgeExpired(before: cutoff) }
    public func unitOfWork<R: Sendable>(_ body: @Sendable (any TouchstoneStore) async throws -> R) async throws -> R {
        try await self.base.unitOfWork(body)
    }

    // MARK: UserStore

    public func insertUser(_ user: UserRecord) async throws {
        try await self.users.insertUser(user)
    }
    public func user(id: String) async throws -> UserRecord? {
        try await self.users.user(id: id)
    }
    public func user(email: String) async throws -> UserRecord? {
        try await self.users.user(email: email)
    }
    public func setRequireDeviceBoundPasskeys(userId: String, required: Bool) async throws -> Bool {
        try await self.users.setRequireDeviceBoundPasskeys(userId: userId, required: required)
    }
    public func users(emailContaining: String?, afterId: String?, limit: Int) async throws -> [UserRecord] {
        try await self.users.users(emailContaining: emailContaining, afterId: afterId, limit: limit)
    }
    public func updatePassword(userId: String, passwordHash: String?) async throws -> Bool {
        try await self.users.updatePassword(userId: userId, passwordHash: passwordHash)
    }
    public func lockUser(id: String) async throws -> Bool { try await self.users.lockUser(id: id) }
    public func credentials(userId: String) async throws -> CredentialSummary { try await self.users.credentials(userId: userId) }

    // MARK: SessionStore

    public func insertSession(_ session: SessionRecord) async throws {
        try await self.sessions.insertSession(session)
    }
    public func session(tokenHash: String) async throws -> SessionRecord? {
        try await self.sessions.session(tokenHash: tokenHash)
    }
    public func updateSessionIdleExpiry(tokenHash: String, idleExpiresAt: Date, lastSeenAt: Date) async throws {
        try await self.sessions.updateSessionIdleExpiry(tokenHash: tokenHash, idleExpiresAt: idleExpiresAt, lastSeenAt: lastSeenAt)
    }
    @discardableResult
    public func reauthenticateSession(
        tokenHash: String,
        at: Date,
        methods: [AuthenticationMethod],
        strongAuthenticatedAt: Date?,
        acr: String?
    ) async throws -> Bool {
        try await self.sessions.reauthenticateSession(
            tokenHash: tokenHash, at: at, methods: methods, strongAuthenticatedAt: strongAuthenticatedAt, acr: acr)
    }
    public func revokeSession(tokenHash: String, at: Date) async throws -> Bool {
        try await self.sessions.revokeSession(tokenHash: tokenHash, at: at)
    }
    public func activeSessions(userId: String, at: Date) async throws -> [SessionRecord] {
        try await self.sessions.activeSessions(userId: userId, at: at)
    }
    public func session(id: String) async throws -> SessionRecord? {
        try await self.sessions.session(id: id)
    }
    public func assignSessionId(tokenHash: String, id: String) async throws -> String? {
        try await self.sessions.assignSessionId(tokenHash: tokenHash, id: id)
    }
    public func revokeSessions(userId: String, keeping: String?, at: Date) async throws -> Int {
        try await self.sessions.revokeSessions(userId: userId, keeping: keeping, at: at)
    }

    // MARK: RegistrationStore

    public func insertRegistration(_ registration: RegistrationRecord) async throws {
        try await self.registrationStore.insertRegistration(registration)
    }
    public func registration(id: String) async throws -> RegistrationRecord? {
        try await self.registrationStore.registration(id: id)
    }
    public func setRegistrationProofKey(id: String, userId: String, thumbprint: String) async throws -> Bool {
        try await self.registrationStore.setRegistrationProofKey(id: id, userId: userId, thumbprint: thumbprint)
    }
    public func signInRegistration(id: String) async throws -> SignInRegistrationRecord? {
        try await self.registrationStore.signInRegistration(id: id)
    }
    public func signInAttempt(registrationId: String, challenge: String) async throws -> SignInAttemptRecord? {
        try await self.registrationStore.signInAttempt(registrationId: registrationId, challenge: challenge)
    }
    public func latestRegistration(keyFingerprint: String) async throws -> RegistrationRecord? {
        try await self.registrationStore.latestRegistration(keyFingerprint: keyFingerprint)
    }
    public func activeRegistration(deviceId: String) async throws -> RegistrationRecord? {
        try await self.registrationStore.activeRegistration(deviceId: deviceId)
    }
    public func registrations(userId: String) async throws -> [RegistrationRecord] {
        try await self.registrationStore.registrations(userId: userId)
    }
    public func activateRegistration(id: String, replacing scope: ReplacementScope, at: Date) async throws -> [String] {
        try await self.registrationStore.activateRegistration(id: id, replacing: scope, at: at)
    }
    public func updateRegistrationStatus(id: String, from: Set<RegistrationStatus>, to: RegistrationStatus, at: Date) async throws -> Bool {
        try await self.registrationStore.updateRegistrationStatus(id: id, from: from, to: to, at: at)
    }
    public func recordFailedSignature(registrationId: String, threshold: Int64, at: Date) async throws -> Bool {
        try await self.registrationStore.recordFailedSignature(registrationId: registrationId, threshold: threshold, at: at)
    }
    public func unlockRegistration(id: String, at: Date) async throws -> Bool {
        try await self.registrationStore.unlockRegistration(id: id, at: at)
    }
    public func setPin(registrationId: String, userId: String, pinHash: String, at: Date) async throws -> Bool {
        try await self.registrationStore.setPin(registrationId: registrationId, userId: userId, pinHash: pinHash, at: at)
    }
    public func removePin(registrationId: String, userId: String) async throws -> Bool {
        try await self.registrationStore.removePin(registrationId: registrationId, userId: userId)
    }
    public func beginPinAttempt(registrationId: String, maxAttempts: Int64) async throws -> PinAttempt {
        try await self.registrationStore.beginPinAttempt(registrationId: registrationId, maxAttempts: maxAttempts)
    }
    public func recordWrongPin(registrationId: String, maxAttempts: Int64, at: Date) async throws -> Bool {
        try await self.registrationStore.recordWrongPin(registrationId: registrationId, maxAttempts: maxAttempts, at: at)
    }
    public func completePinSignIn(registrationId: String, session: SessionRecord, events: [AuditEventRecord], at: Date) async throws -> Bool {
        try await self.registrationStore.completePinSignIn(registrationId: registrationId, session: session, events: events, at: at)
    }
    public func reenablePins(userId: String) async throws -> [String] {
        try await self.registrationStore.reenablePins(userId: userId)
    }

    // MARK: ChallengeLedger

    public func insertChallenge(_ challenge: ChallengeRecord) async throws {
        try await self.challenges.insertChallenge(challenge)
    }
    public func recordAnsweredChallenge(_ challenge: ChallengeRecord, at: Date) async throws -> Bool {
        try await self.challenges.recordAnsweredChallenge(challenge, at: at)
    }
    public func completeSignIn(challenge: ChallengeRecord, session: SessionRecord, events: [AuditEventRecord], at: Date) async throws -> UserRecord? {
        try await self.challenges.completeSignIn(challenge: challenge, session: session, events: events, at: at)
    }
    public func consumeLatestChallenge(registrationId: String, purpose: ChallengePurpose, at: Date) async throws -> ChallengeRecord? {
        try await self.challenges.consumeLatestChallenge(registrationId: registrationId, purpose: purpose, at: at)
    }
    public func insertWebAuthnChallenge(_ challenge: WebAuthnChallengeRecord) async throws {
        try await self.challenges.insertWebAuthnChallenge(challenge)
    }
    public func recordAnsweredWebAuthnChallenge(_ challenge: WebAuthnChallengeRecord, at: Date) async throws -> Bool {
        try await self.challenges.recordAnsweredWebAuthnChallenge(challenge, at: at)
    }
    public func consumeWebAuthnChallenge(_ challenge: String, purpose: ChallengePurpose, at: Date) async throws -> WebAuthnChallengeRecord? {
        try await self.challenges.consumeWebAuthnChallenge(challenge, purpose: purpose, at: at)
    }

    // MARK: PasskeyStore

    public func insertPasskey(_ passkey: PasskeyRecord) async throws {
        try await self.passkeyStore.insertPasskey(passkey)
    }
    public func passkey(id: String) async throws -> PasskeyRecord? {
        try await self.passkeyStore.passkey(id: id)
    }
    public func passkey(credentialId: String) async throws -> PasskeyRecord? {
        try await self.passkeyStore.passkey(credentialId: credentialId)
    }
    public func passkeySignInAttempt(credentialId: String, challenge: String) async throws -> PasskeySignInAttemptRecord? {
        try await self.passkeyStore.passkeySignInAttempt(credentialId: credentialId, challenge: challenge)
    }
    public func passkeys(userId: String) async throws -> [PasskeyRecord] {
        try await self.passkeyStore.passkeys(userId: userId)
    }
    public func passkeys(aaguids: [String], attestationKeyIds: [String], limit: Int) async throws -> [PasskeyRecord] {
        try await self.passkeyStore.passkeys(aaguids: aaguids, attestationKeyIds: attestationKeyIds, limit: limit)
    }
    public func renamePasskey(id: String, userId: String, name: String?) async throws -> Bool {
        try await self.passkeyStore.renamePasskey(id: id, userId: userId, name: name)
    }
    public func deletePasskey(id: String, userId: String) async throws -> Bool {
        try await self.passkeyStore.deletePasskey(id: id, userId: userId)
    }
    public func recordPasskeyUse(id: String, signCount: Int64, backupEligible: Bool, backedUp: Bool, cloneWarning: Bool, at: Date) async throws {
        try await self.passkeyStore.recordPasskeyUse(id: id, signCount: signCount, backupEligible: backupEligible, backedUp: backedUp, cloneWarning: cloneWarning, at: at)
    }
    public func recordFailedPasskeyAssertion(id: String, threshold: Int64, at: Date) async throws -> Bool {
        try await self.passkeyStore.recordFailedPasskeyAssertion(id: id, threshold: threshold, at: at)
    }
    public func unlockPasskey(id: String, userId: String) async throws -> Bool {
        try await self.passkeyStore.unlockPasskey(id: id, userId: userId)
    }
    public func completePasskeySignIn( challenge: WebAuthnChallengeRecord, passkeyId: String, signCount: Int64, backupEligible: Bool, backedUp: Bool, cloneWarning: Bool, session: SessionRecord, events: [AuditEventRecord], at: Date ) async throws -> Bool {
        try await self.passkeyStore.completePasskeySignIn(challenge: challenge, passkeyId: passkeyId, signCount: signCount, backupEligible: backupEligible, backedUp: backedUp, cloneWarning: cloneWarning, session: session, events: events, at: at)
    }

    // MARK: AppAttestKeyStore

    public func insertAppAttestKey(_ key: AppAttestKeyRecord) async throws {
        try await self.appAttestKeys.insertAppAttestKey(key)
    }
    public func appAttestKey(keyId: String) async throws -> AppAttestKeyRecord? {
        try await self.appAttestKeys.appAttestKey(keyId: keyId)
    }
    public func advanceAppAttestCounter(keyId: String, from previous: Int64, to counter: Int64, at: Date) async throws -> Bool {
        try await self.appAttestKeys.advanceAppAttestCounter(keyId: keyId, from: previous, to: counter, at: at)
    }

    // MARK: AuditStore

    public func insertAuditEvent(_ event: AuditEventRecord) async throws {
        try await self.audit.insertAuditEvent(event)
    }
    public func auditEvents(_ query: AuditEventQuery) async throws -> [AuditEventRecord] {
        try await self.audit.auditEvents(query)
    }
    public func auditEventCounts(since: Date, bucket: TimeInterval, types: [String]) async throws -> [AuditEventCount] {
        try await self.audit.auditEventCounts(since: since, bucket: bucket, types: types)
    }
    public func deleteAuditEvents(before cutoff: Date) async throws -> Int {
        try await self.audit.deleteAuditEvents(before: cutoff)
    }

    // MARK: AbuseStore

    public func takeRateLimitToken(key: String, capacity: Int64, interval: TimeInterval, at: Date) async throws -> TimeInterval? {
        try await self.abuse.takeRateLimitToken(key: key, capacity: capacity, interval: interval, at: at)
    }
    public func recordLoginFailure(key: String, window: TimeInterval, at: Date) async throws -> LoginFailures {
        try await self.abuse.recordLoginFailure(key: key, window: window, at: at)
    }
    public func loginFailures(key: String) async throws -> LoginFailures? {
        try await self.abuse.loginFailures(key: key)
    }
    public func clearLoginFailures(key: String) async throws {
        try await self.abuse.clearLoginFailures(key: key)
    }
    public func recordFailedCredentialCheck(address: String, limit: Int64, window: TimeInterval, at: Date) async throws -> AddressFailures {
        try await self.abuse.recordFailedCredentialCheck(address: address, limit: limit, window: window, at: at)
    }
    public func addressBlock(address: String, at: Date) async throws -> AddressFailures? {
        try await self.abuse.addressBlock(address: address, at: at)
    }
    public func blockedAddresses(at: Date, limit: Int) async throws -> [AddressFailures] {
        try await self.abuse.blockedAddresses(at: at, limit: limit)
    }
    public func clearAddressFailures(address: String, at: Date) async throws -> Bool {
        try await self.abuse.clearAddressFailures(address: address, at: at)
    }

    // MARK: SigningKeyStore

    public func signingKeys() async throws -> [SigningKeyRecord] {
        try await self.signingKeys.signingKeys()
    }
    public func insertSigningKey(_ key: SigningKeyRecord) async throws -> Bool {
        try await self.signingKeys.insertSigningKey(key)
    }

    // MARK: ConfirmationStore

    public func insertConfirmation(_ confirmation: ConfirmationRecord) async throws {
        try await self.confirmations.insertConfirmation(confirmation)
    }
    public func confirmation(id: String) async throws -> ConfirmationRecord? {
        try await self.confirmations.confirmation(id: id)
    }
    public func confirmations(userId: String, limit: Int) async throws -> [ConfirmationRecord] {
        try await self.confirmations.confirmations(userId: userId, limit: limit)
    }
    public func decideConfirmation(id: String, approval: ConfirmationRecord.Approval?, events: [AuditEventRecord], at: Date) async throws -> Bool {
        try await self.confirmations.decideConfirmation(id: id, approval: approval, events: events, at: at)
    }

    // MARK: AdminKeyStore

    public func insertAdminKey(_ key: AdminKeyRecord) async throws {
        try await self.adminKeys.insertAdminKey(key)
    }
    public func adminKey(keyHash: String) async throws -> AdminKeyRecord? {
        try await self.adminKeys.adminKey(keyHash: keyHash)
    }
    public func adminKeys() async throws -> [AdminKeyRecord] {
        try await self.adminKeys.adminKeys()
    }
    @discardableResult
    public func revokeAdminKey(id: String, at: Date) async throws -> Bool {
        try await self.adminKeys.revokeAdminKey(id: id, at: at)
    }

    // MARK: SettingStore

    public func setting(name: String) async throws -> String? {
        try await self.settings.setting(name: name)
    }
    public func saveSetting(name: String, value: String, at: Date) async throws {
        try await self.settings.saveSetting(name: name, value: value, at: at)
    }
    public func insertSetting(name: String, value: String, at: Date) async throws -> Bool {
        try await self.settings.insertSetting(name: name, value: value, at: at)
    }

    // MARK: MetadataStore

    public func metadataBLOB() async throws -> MetadataBLOBRecord? {
        try await self.metadata.metadataBLOB()
    }
    public func metadataBLOBNumber() async throws -> Int64? {
        try await self.metadata.metadataBLOBNumber()
    }
    public func saveMetadataBLOB(_ record: MetadataBLOBRecord) async throws -> Bool {
        try await self.metadata.saveMetadataBLOB(record)
    }
}
