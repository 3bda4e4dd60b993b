import Foundation
import Testing
import TouchstoneStore

/// A store that forwards every call to another, and can play a concurrent attempt that wins a race: armed with
/// ``loseNextRace()``, the next write that answers a sign-in challenge (a completing write, or the recording of a
/// failed attempt; biometric or passkey) is preceded by the recording of the same challenge, as another request
/// answering it between this attempt's read and its write would have done. The server's lost-race branches are then
/// reached deterministically instead of by timing.
final class RacingStore: TouchstoneStore, @unchecked Sendable {
    let inner: any TouchstoneStore
    private let lock = NSLock()
    private var armed = false
    private var lost = 0

    /// How many races this store has made its caller lose.
    var racesLost: Int { self.lock.withLock { self.lost } }

    init(_ inner: any TouchstoneStore) {
        self.inner = inner
    }

    /// The next write that answers a sign-in challenge finds it answered already.
    func loseNextRace() {
        self.lock.withLock { self.armed = true }
    }

    private func takeRace() -> Bool {
        self.lock.withLock {
            defer { self.armed = false }
            if self.armed { self.lost += 1 }
            return self.armed
        }
    }

    /// The competitor: records the challenge as answered (for a biometric challenge, as the winning attempt's own
    /// write does; a passkey challenge alike).
    private func competitor(_ challenge: ChallengeRecord, at: Date) async throws {
        if self.takeRace() { #expect(try await self.inner.recordAnsweredChallenge(challenge, at: at)) }
    }

    private func competitor(_ challenge: WebAuthnChallengeRecord, at: Date) async throws {
        if self.takeRace() { #expect(try await self.inner.recordAnsweredWebAuthnChallenge(challenge, at: at)) }
    }

    func recordAnsweredChallenge(_ challenge: ChallengeRecord, at: Date) async throws -> Bool {
        try await self.competitor(challenge, at: at)
        return try await self.inner.recordAnsweredChallenge(challenge, at: at)
    }

    func completeSignIn(challenge: ChallengeRecord, session: SessionRecord, events: [AuditEventRecord], at: Date)
        async throws -> UserRecord?
    {
        try await self.competitor(challenge, at: at)
        return try await self.inner.completeSignIn(challenge: challenge, session: session, events: events, at: at)
    }

    func recordAnsweredWebAuthnChallenge(_ challenge: WebAuthnChallengeRecord, at: Date) async throws -> Bool {
        try await self.competitor(challenge, at: at)
        return try await self.inner.recordAnsweredWebAuthnChallenge(challenge, at: at)
    }

    func completePasskeySignIn(
        challenge: WebAuthnChallengeRecord,
        passkeyId: String,
        signCount: Int64,
        backupEligible: Bool,
        backedUp: Bool,
        cloneWarning: Bool,
        session: SessionRecord,
        events: [AuditEventRecord],
        at: Date
    ) async throws -> Bool {
        try await self.competitor(challenge, at: at)
        return try await self.inner.completePasskeySignIn(
            challenge: challenge,
            passkeyId: passkeyId,
            signCount: signCount,
            backupEligible: backupEligible,
            backedUp: backedUp,
            cloneWarning: cloneWarning,
            session: session,
            events: events,
            at: at
        )
    }

    // MARK: Forwarded as they are

    func migrate() async throws { try await self.inner.migrate() }
    func checkHealth() async throws { try await self.inner.checkHealth() }
    func recordFailedCredentialCheck(address: String, limit: Int64, window: TimeInterval, at: Date) async throws -> AddressFailures {
        try await self.inner.recordFailedCredentialCheck(address: address, limit: limit, window: window, at: at)
    }
    func addressBlock(address: String, at: Date) async throws -> AddressFailures? {
        try await self.inner.addressBlock(address: address, at: at)
    }
    func blockedAddresses(at: Date, limit: Int) async throws -> [AddressFailures] {
        try await self.inner.blockedAddresses(at: at, limit: limit)
    }
    func clearAddressFailures(address: String, at: Date) async throws -> Bool {
        try await self.inner.clearAddressFailures(address: address, at: at)
    }
    func signingKeys() async throws -> [SigningKeyRecord] { try await self.inner.signingKeys() }
    func insertSigningKey(_ key: SigningKeyRecord) async throws -> Bool { try await self.inner.insertSigningKey(key) }
    func session(id: String) async throws -> SessionRecord? { try await self.inner.session(id: id) }
    func assignSessionId(tokenHash: String, id: String) async throws -> String? {
        try await self.inner.assignSessionId(tokenHash: tokenHash, id: id)
    }
    func insertConfirmation(_ confirmation: ConfirmationRecord) async throws {
        try await self.inner.insertConfirmation(confirmation)
    }
    func confirmation(id: String) async throws -> ConfirmationRecord? { try await self.inner.confirmation(id: id) }
    func decideConfirmation(id: String, approval: ConfirmationRecord.Approval?, events: [AuditEventRecord], at: Date) async throws -> Bool {
        try await self.inner.decideConfirmation(id: id, approval: approval, events: events, at: at)
    }
    func shutdown() async throws { try await self.inner.shutdown() }
    func auditEventCounts(since: Date, bucket: TimeInterval, types: [String]) async throws -> [AuditEventCount] {
        try await self.inner.auditEventCounts(since: since, bucket: bucket, types: types)
    }
    func activeSessions(userId: String, at: Date) async throws -> [SessionRecord] {
        try await self.inner.activeSessions(userId: userId, at: at)
    }
    func setRequireDeviceBoundPasskeys(userId: String, required: Bool) async throws -> Bool {
        try await self.inner.setRequireDeviceBoundPasskeys(userId: userId, required: required)
    }
    func insertUser(_ user: UserRecord) async throws { try await self.inner.insertUser(user) }
    func user(id: String) async throws -> UserRecord? { try await self.inner.user(id: id) }
    func user(email: String) async throws -> UserRecord? { try await self.inner.user(email: email) }
    func insertSession(_ session: SessionRecord) async throws { try await self.inner.insertSession(session) }
    func session(tokenHash: String) async throws -> SessionRecord? {
        try await self.inner.session(tokenHash: tokenHash)
    }
    func updateSessionIdleExpiry(tokenHash: String, idleExpiresAt: Date) async throws {
        try await self.inner.updateSessionIdleExpiry(tokenHash: tokenHash, idleExpiresAt: idleExpiresAt)
    }
    func revokeSession(tokenHash: String, at: Date) async throws -> Bool {
        try await self.inner.revokeSession(tokenHash: tokenHash, at: at)
    }
    func insertRegistration(_ registration: RegistrationRecord) async throws {
        try await self.inner.insertRegistration(registration)
    }
    func registration(id: String) async throws -> RegistrationRecord? { try await self.inner.registration(id: id) }
    func signInRegistration(id: String) async throws -> SignInRegistrationRecord? {
        try await self.inner.signInRegistration(id: id)
    }
    func signInAttempt(registrationId: String, challenge: String) async throws -> SignInAttemptRecord? {
        try await self.inner.signInAttempt(registrationId: registrationId, challenge: challenge)
    }
    func latestRegistration(keyFingerprint: String) async throws -> RegistrationRecord? {
        try await self.inner.latestRegistration(keyFingerprint: keyFingerprint)
    }
    func activeRegistration(deviceId: String) async throws -> RegistrationRecord? {
        try await self.inner.activeRegistration(deviceId: deviceId)
    }
    func registrations(userId: String) async throws -> [RegistrationRecord] {
        try await self.inner.registrations(userId: userId)
    }
    func activateRegistration(id: String, replacing scope: ReplacementScope, at: Date) async throws -> [String] {
        try await self.inner.activateRegistration(id: id, replacing: scope, at: at)
    }
    func updateRegistrationStatus(id: String, from: Set<RegistrationStatus>, to: RegistrationStatus, at: Date) async throws -> Bool {
        try await self.inner.updateRegistrationStatus(id: id, from: from, to: to, at: at)
    }
    func recordFailedSignature(registrationId: String, threshold: Int64, at: Date) async throws -> Bool {
        try await self.inner.recordFailedSignature(registrationId: registrationId, threshold: threshold, at: at)
    }
    func unlockRegistration(id: String, at: Date) async throws -> Bool {
        try await self.inner.unlockRegistration(id: id, at: at)
    }
    func insertChallenge(_ challenge: ChallengeRecord) async throws { try await self.inner.insertChallenge(challenge) }
    func consumeLatestChallenge(registrationId: String, purpose: ChallengePurpose, at: Date) async throws -> ChallengeRecord? {
        try await self.inner.consumeLatestChallenge(registrationId: registrationId, purpose: purpose, at: at)
    }
    func purgeExpired(before cutoff: Date) async throws -> PurgeResult {
        try await self.inner.purgeExpired(before: cutoff)
    }
    func unitOfWork<R: Sendable>(_ body: @Sendable (any TouchstoneStore) async throws -> R) async throws -> R {
        try await self.inner.unitOfWork(body)
    }
    func insertPasskey(_ passkey: PasskeyRecord) async throws { try await self.inner.insertPasskey(passkey) }
    func passkey(id: String) async throws -> PasskeyRecord? { try await self.inner.passkey(id: id) }
    func passkey(credentialId: String) async throws -> PasskeyRecord? {
        try await self.inner.passkey(credentialId: credentialId)
    }
    func passkeySignInAttempt(credentialId: String, challenge: String) async throws -> PasskeySignInAttemptRecord? {
        try await self.inner.passkeySignInAttempt(credentialId: credentialId, challenge: challenge)
    }
    func passkeys(userId: String) async throws -> [PasskeyRecord] { try await self.inner.passkeys(userId: userId) }
    func passkeys(aaguids: [String], attestationKeyIds: [String], limit: Int) async throws -> [PasskeyRecord] {
        try await self.inner.passkeys(aaguids: aaguids, attestationKeyIds: attestationKeyIds, limit: limit)
    }
    func renamePasskey(id: String, userId: String, name: String?) async throws -> Bool {
        try await self.inner.renamePasskey(id: id, userId: userId, name: name)
    }
    func deletePasskey(id: String, userId: String) async throws -> Bool {
        try await self.inner.deletePasskey(id: id, userId: userId)
    }
    func recordPasskeyUse(id: String, signCount: Int64, backupEligible: Bool, backedUp: Bool, cloneWarning: Bool, at: Date) async throws {
        try await self.inner.recordPasskeyUse(id: id, signCount: signCount, backupEligible: backupEligible, backedUp: backedUp, cloneWarning: cloneWarning, at: at)
    }
    func insertWebAuthnChallenge(_ challenge: WebAuthnChallengeRecord) async throws {
        try await self.inner.insertWebAuthnChallenge(challenge)
    }
    func recordFailedPasskeyAssertion(id: String, threshold: Int64, at: Date) async throws -> Bool {
        try await self.inner.recordFailedPasskeyAssertion(id: id, threshold: threshold, at: at)
    }
    func unlockPasskey(id: String, userId: String) async throws -> Bool {
        try await self.inner.unlockPasskey(id: id, userId: userId)
    }
    func insertAppAttestKey(_ key: AppAttestKeyRecord) async throws { try await self.inner.insertAppAttestKey(key) }
    func appAttestKey(keyId: String) async throws -> AppAttestKeyRecord? {
        try await self.inner.appAttestKey(keyId: keyId)
    }
    func advanceAppAttestCounter(keyId: String, from previous: Int64, to counter: Int64, at: Date) async throws -> Bool {
        try await self.inner.advanceAppAttestCounter(keyId: keyId, from: previous, to: counter, at: at)
    }
    func consumeWebAuthnChallenge(_ challenge: String, purpose: ChallengePurpose, at: Date) async throws -> WebAuthnChallengeRecord? {
        try await self.inner.consumeWebAuthnChallenge(challenge, purpose: purpose, at: at)
    }
    func setPin(registrationId: String, userId: String, pinHash: String, at: Date) async throws -> Bool {
        try await self.inner.setPin(registrationId: registrationId, userId: userId, pinHash: pinHash, at: at)
    }
    func removePin(registrationId: String, userId: String) async throws -> Bool {
        try await self.inner.removePin(registrationId: registrationId, userId: userId)
    }
    func beginPinAttempt(registrationId: String, maxAttempts: Int64) async throws -> PinAttempt {
        try await self.inner.beginPinAttempt(registrationId: registrationId, maxAttempts: maxAttempts)
    }
    func recordWrongPin(registrationId: String, maxAttempts: Int64, at: Date) async throws -> Bool {
        try await self.inner.recordWrongPin(registrationId: registrationId, maxAttempts: maxAttempts, at: at)
    }
    func completePinSignIn(registrationId: String, session: SessionRecord, events: [AuditEventRecord], at: Date) async throws -> Bool {
        try await self.inner.completePinSignIn(registrationId: registrationId, session: session, events: events, at: at)
    }
    func reenablePins(userId: String) async throws -> [String] { try await self.inner.reenablePins(userId: userId) }
    func insertAuditEvent(_ event: AuditEventRecord) async throws { try await self.inner.insertAuditEvent(event) }
    func auditEvents(_ query: AuditEventQuery) async throws -> [AuditEventRecord] {
        try await self.inner.auditEvents(query)
    }
    func deleteAuditEvents(before cutoff: Date) async throws -> Int {
        try await self.inner.deleteAuditEvents(before: cutoff)
    }
    func takeRateLimitToken(key: String, capacity: Int64, interval: TimeInterval, at: Date) async throws -> TimeInterval? {
        try await self.inner.takeRateLimitToken(key: key, capacity: capacity, interval: interval, at: at)
    }
    func recordLoginFailure(key: String, window: TimeInterval, at: Date) async throws -> LoginFailures {
        try await self.inner.recordLoginFailure(key: key, window: window, at: at)
    }
    func loginFailures(key: String) async throws -> LoginFailures? { try await self.inner.loginFailures(key: key) }
    func clearLoginFailures(key: String) async throws { try await self.inner.clearLoginFailures(key: key) }
    func insertAdminKey(_ key: AdminKeyRecord) async throws { try await self.inner.insertAdminKey(key) }
    func adminKey(keyHash: String) async throws -> AdminKeyRecord? { try await self.inner.adminKey(keyHash: keyHash) }
    func adminKeys() async throws -> [AdminKeyRecord] { try await self.inner.adminKeys() }
    func revokeAdminKey(id: String, at: Date) async throws -> Bool {
        try await self.inner.revokeAdminKey(id: id, at: at)
    }
    func users(emailContaining: String?, afterId: String?, limit: Int) async throws -> [UserRecord] {
        try await self.inner.users(emailContaining: emailContaining, afterId: afterId, limit: limit)
    }
    func revokeSessions(userId: String, keeping: String?, at: Date) async throws -> Int {
        try await self.inner.revokeSessions(userId: userId, keeping: keeping, at: at)
    }
    func updatePassword(userId: String, passwordHash: String) async throws -> Bool {
        try await self.inner.updatePassword(userId: userId, passwordHash: passwordHash)
    }
    func insertSetting(name: String, value: String, at: Date) async throws -> Bool {
        try await self.inner.insertSetting(name: name, value: value, at: at)
    }
    func setting(name: String) async throws -> String? { try await self.inner.setting(name: name) }
    func saveSetting(name: String, value: String, at: Date) async throws {
        try await self.inner.saveSetting(name: name, value: value, at: at)
    }
    func metadataBLOB() async throws -> MetadataBLOBRecord? { try await self.inner.metadataBLOB() }
    func metadataBLOBNumber() async throws -> Int64? { try await self.inner.metadataBLOBNumber() }
    func saveMetadataBLOB(_ record: MetadataBLOBRecord) async throws -> Bool {
        try await self.inner.saveMetadataBLOB(record)
    }
}
