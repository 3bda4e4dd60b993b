public import Foundation

/// Everything Touchstone persists: one protocol per aggregate (`Stores/`), joined here for the callers that need several.
///
/// Implementations must give every method the same semantics: in particular ``recordAnsweredChallenge(_:at:)``,
/// ``completeSignIn(challenge:session:events:at:)`` and ``consumeLatestChallenge(registrationId:purpose:at:)`` succeed
/// at most once per challenge, however many callers race, and ``activateRegistration(id:replacing:at:)`` is atomic.
public protocol TouchstoneStore: UserStore, SessionStore, RegistrationStore, ChallengeLedger, PasskeyStore, AppAttestKeyStore,
    AuditStore, AbuseStore, SigningKeyStore, ConfirmationStore, AdminKeyStore, SettingStore, MetadataStore, OAuthClientStore,
    AuthorizationStore, WebhookStore, MailQueueStore, RecoveryStore, PhoneApprovalStore, SignUpStore, DPoPStore, DeferredWorkStore
{
    /// Brings the schema up to date. Safe to call on every start.
    func migrate() async throws
    /// Succeeds when the database answers a trivial query; throws ``StoreError/unavailable(_:)`` otherwise.
    func checkHealth() async throws
    /// Closes connections. The store is unusable afterwards.
    func shutdown() async throws
    /// Whether one server at a time uses this database (an SQLite file serves one instance; PostgreSQL is shared): what
    /// every instance must see may then be kept in the server's memory. False by default.
    var servesOneProcess: Bool { get }
    /// Runs `body` as one unit of work: every method of every aggregate called on the store `body` is given joins one
    /// transaction, committed when `body` returns and rolled back when it throws. For a change that spans aggregates
    /// (a user, its first session and their audit events), instead of a method per combination:
    ///
    /// ```swift
    /// try await store.unitOfWork { tx in
    ///     try await tx.insertUser(user)
    ///     try await tx.insertSession(session)
    ///     try await tx.insertAuditEvent(event)
    /// }
    /// ```
    ///
    /// The store given to `body` is for that call only, and `body` uses only it: a write through the outer store from
    /// inside the unit would wait for the unit's own transaction (on SQLite, the one writer). The sign-ins'
    /// completions stay single methods: one statement each on PostgreSQL, measured in docs/performance.md.
    func unitOfWork<R: Sendable>(_ body: @Sendable (any TouchstoneStore) async throws -> R) async throws -> R
    /// Deletes challenges and sessions that ended before `cutoff`, and pending registrations none of whose challenges
    /// is still answerable at `cutoff` (abandoned enrolments).
    func purgeExpired(before cutoff: Date) async throws -> PurgeResult
}

extension TouchstoneStore {
    public var servesOneProcess: Bool { false }

    /// ``completeSignIn(challenge:session:events:at:)`` without audit events.
    public func completeSignIn(challenge: ChallengeRecord, session: SessionRecord, at: Date) async throws -> UserRecord? {
        try await self.completeSignIn(challenge: challenge, session: session, events: [], at: at)
    }

    /// ``completePinSignIn(registrationId:session:events:at:)`` without audit events.
    public func completePinSignIn(registrationId: String, session: SessionRecord, at: Date) async throws -> Bool {
        try await self.completePinSignIn(registrationId: registrationId, session: session, events: [], at: at)
    }

    /// ``completePasskeySignIn(challenge:passkeyId:signCount:backupEligible:backedUp:cloneWarning:session:events:at:)`` without audit
    /// events.
    public func completePasskeySignIn(
        challenge: WebAuthnChallengeRecord,
        passkeyId: String,
        signCount: Int64,
        backupEligible: Bool,
        backedUp: Bool,
        cloneWarning: Bool,
        session: SessionRecord,
        at: Date
    ) async throws -> Bool {
        try await self.completePasskeySignIn(
            challenge: challenge,
            passkeyId: passkeyId,
            signCount: signCount,
            backupEligible: backupEligible,
            backedUp: backedUp,
            cloneWarning: cloneWarning,
            session: session,
            events: [],
            at: at
        )
    }
}
