public import Foundation

/// Sign-ins approved on a phone (issue #34): the requests, the device credentials and push tokens of registrations,
/// and accounts whose phone approvals are paused.
///
/// One of the aggregates of ``TouchstoneStore``. Every deciding or redeeming method succeeds at most once per request,
/// however many callers race on however many instances.
public protocol PhoneApprovalStore: Sendable {
    /// Stores a request and `events` in one transaction, unless its address already has `maximumPending` requests
    /// pending and unexpired at `at` (then nothing is written and the answer is false). A request without an address
    /// is always stored.
    func insertSignInRequest(_ request: SignInRequestRecord, maximumPending: Int, events: [AuditEventRecord], at: Date) async throws -> Bool
    func signInRequest(id: String) async throws -> SignInRequestRecord?
    /// The requests bound to the user, whatever their state, newest first, at most `limit` (the user's data export).
    func signInRequests(userId: String, limit: Int) async throws -> [SignInRequestRecord]
    /// The request whose poll token (a CIBA `auth_req_id`) hashes to `pollTokenHash`.
    func signInRequest(pollTokenHash: String) async throws -> SignInRequestRecord?
    /// The user's requests that are pending and unexpired at `at`, oldest first.
    func pendingSignInRequests(userId: String, at: Date) async throws -> [SignInRequestRecord]
    /// Binds a request made without an address to `userId` (the first phone that scans it); false when it is bound,
    /// has an address, is decided or has expired.
    func bindSignInRequest(id: String, userId: String, at: Date) async throws -> Bool
    /// Decides a pending, unexpired request and stores `events` in the same transaction; an approval also clears the
    /// registration's failed-signature count. False when it was decided or had expired: of concurrent decisions, one
    /// succeeds.
    func decideSignInRequest(id: String, decision: SignInRequestDecision, events: [AuditEventRecord], at: Date) async throws -> Bool
    /// Marks an approved request redeemed (a session or tokens were issued for it); false when it is not approved or
    /// was redeemed already. Used inside a unit of work with what is issued.
    func redeemSignInRequest(id: String, at: Date) async throws -> Bool
    /// Records a CIBA poll at `at` unless the previous one was less than `interval` before; false then (`slow_down`).
    func recordSignInRequestPoll(id: String, interval: TimeInterval, at: Date) async throws -> Bool

    /// Gives a registration a new device credential (replacing any earlier one, keeping its push token).
    func setDeviceCredential(registrationId: String, credentialHash: String, at: Date) async throws
    /// The registration's device credential and push token, if it has a credential.
    func deviceChannel(registrationId: String) async throws -> DeviceChannelRecord?
    /// The channels of the user's active registrations.
    func deviceChannels(userId: String) async throws -> [DeviceChannelRecord]
    /// Sets the push token of a registration that has a device credential; false when it has none.
    func setPushToken(registrationId: String, platform: String, token: String, at: Date) async throws -> Bool

    /// Forgets a push token Apple no longer accepts, if it is still the registration's.
    func clearPushToken(registrationId: String, token: String) async throws
    /// Pauses phone approvals of an account until `until` (a user said "not me").
    func pausePhoneApprovals(userId: String, until: Date) async throws
    /// When the account's phone approvals resume, if they are paused at `at`.
    func phoneApprovalsPausedUntil(userId: String, at: Date) async throws -> Date?
}
