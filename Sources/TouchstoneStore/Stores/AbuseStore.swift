public import Foundation

/// Abuse protection shared by every instance: rate-limit buckets, failed password sign-ins and blocked addresses.
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol AbuseStore: Sendable {
    /// Takes one token from the bucket `key` (capacity `capacity`, one token back every `interval`), shared by every
    /// instance using this database. Returns `nil` when allowed, or how long until a token is available.
    func takeRateLimitToken(key: String, capacity: Int64, interval: TimeInterval, at: Date) async throws -> TimeInterval?

    /// Counts a failed password sign-in for `key`; a count whose last failure is older than `window` starts again.
    func recordLoginFailure(key: String, window: TimeInterval, at: Date) async throws -> LoginFailures
    func loginFailures(key: String) async throws -> LoginFailures?
    func clearLoginFailures(key: String) async throws

    /// Counts a failed credential check (a wrong password or PIN) from `address`, atomically: a count whose window
    /// (started by its first failure) is older than `window` starts again; when the count reaches `limit` the address
    /// is blocked until `window` after this failure (and each further failure while blocked extends it).
    func recordFailedCredentialCheck(address: String, limit: Int64, window: TimeInterval, at: Date) async throws -> AddressFailures

    /// The address's block, if it is blocked at `at`.
    func addressBlock(address: String, at: Date) async throws -> AddressFailures?

    /// Every address blocked at `at`, the latest block first (at most `limit`).
    func blockedAddresses(at: Date, limit: Int) async throws -> [AddressFailures]

    /// Forgets an address's failures and block; returns whether it was blocked at `at`.
    func clearAddressFailures(address: String, at: Date) async throws -> Bool
}
