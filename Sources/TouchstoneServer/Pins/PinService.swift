import Foundation
import TouchstoneStore

/// The app PIN: a fallback for a registration when biometrics fail or are locked out on the device.
///
/// The PIN is stored as a bcrypt hash (``PasswordHasher``). Each attempt is counted before it is checked, so however many requests race,
/// at most `pinMaxAttempts` wrong PINs are ever tried; then the PIN is disabled until the user signs in with the
/// password. A PIN session never counts as fresh strong authentication.
struct PinService: Sendable {
    let store: any RegistrationStore & UserStore
    let sessions: SessionManager
    let hasher: PasswordHasher
    let policy: PolicyProvider
    let audit: AuditLog
    let now: @Sendable () -> Date
    let reauthenticationWindow: TimeInterval

    /// 4 to 8 ASCII digits (``InputRules/pin(_:field:)``), else 400 `invalid_request`.
    static func checkWellFormed(_ pin: String) throws {
        do {
            _ = try InputRules.pin(pin)
        } catch {
            throw APIError.invalidRequest(error.message)
        }
    }

    /// Sets or replaces the PIN of one of the caller's active registrations; needs fresh strong authentication.
    func setPin(caller: AuthenticatedSession, registrationId: String, pin: String) async throws -> RegistrationRecord {
        try self.sessions.requireFreshStrongAuthentication(caller, within: self.reauthenticationWindow)
        try Self.checkWellFormed(pin)
        guard let registration = try await self.store.registration(id: registrationId), registration.userId == caller.user.id,
            registration.status != .pending
        else {
            throw APIError.registrationNotFound
        }
        guard registration.status == .active else {
            throw registration.status == .locked ? APIError.registrationLocked : APIError.registrationRevoked
        }
        let hash = try await self.hasher.hash(pin: pin)
        guard try await self.store.setPin(registrationId: registrationId, userId: caller.user.id, pinHash: hash, at: self.now())
        else {
            throw APIError.registrationNotFound
        }
        try await self.audit.record(.pinSet, userId: caller.user.id, registrationId: registrationId)
        guard let updated = try await self.store.registration(id: registrationId) else { throw APIError.registrationNotFound }
        return updated
    }

    /// Removes the PIN of one of the caller's registrations (any session may: it only takes a way in away).
    func removePin(caller: AuthenticatedSession, registrationId: String) async throws {
        guard let registration = try await self.store.registration(id: registrationId), registration.userId == caller.user.id,
            registration.status != .pending
        else {
            throw APIError.registrationNotFound
        }
        guard try await self.store.removePin(registrationId: registrationId, userId: caller.user.id) else { throw APIError.pinNotSet }
        try await self.audit.record(.pinRemoved, userId: caller.user.id, registrationId: registrationId)
    }

    /// Signs in with a registration's PIN: a session with `methods: ["pin"]`.
    func authenticate(registrationId: String, pin: String, sessionLifetime: TimeInterval?) async throws
        -> (UserRecord, String, SessionRecord)
    {
        let policy = self.policy.current
        guard policy.biometricsEnabled else { throw APIError.biometricsDisabled }
        try Self.checkWellFormed(pin)
        let maxAttempts = Int64(policy.pinMaxAttempts)
        let userId: String
        let hash: String
        switch try await self.store.beginPinAttempt(registrationId: registrationId, maxAttempts: maxAttempts) {
        case .verify(let storedHash, let owner):
            (hash, userId) = (storedHash, owner)
        case .noPin:
            throw APIError.pinNotSet
        case .disabled:
            throw APIError.pinDisabled
        case .noRegistration:
            guard let registration = try await self.store.registration(id: registrationId), registration.status != .pending else {
                throw APIError.registrationNotFound
            }
            throw registration.status == .locked ? APIError.registrationLocked : APIError.registrationRevoked
        }
        let now = self.now()
        guard try await self.hasher.verify(pin: pin, hash: hash) != .mismatch else {
            // The event (and its notice) is stored only if this wrong PIN is the one that disables the PIN.
            let address = try await self.store.user(id: userId)?.email
            try await self.audit.commit(self.audit.event(.pinDisabled, .info, userId: userId, registrationId: registrationId, notify: address)) { tx in
                try await tx.recordWrongPin(registrationId: registrationId, maxAttempts: maxAttempts, at: now)
            }
            throw APIError.invalidPin
        }
        guard let user = try await self.store.user(id: userId) else { throw APIError.registrationNotFound }
        let (token, session) = self.sessions.make(
            for: user,
            method: .pin,
            registrationId: registrationId,
            requestedLifetime: sessionLifetime
        )
        let event = self.audit.event(.pinLogin, userId: user.id, registrationId: registrationId)
        guard try await self.store.completePinSignIn(registrationId: registrationId, session: session, events: [event], at: now)
        else {
            throw APIError.pinDisabled  // disabled or removed while this attempt was being checked
        }
        self.audit.committed([event])
        return (user, token, session)
    }
}
