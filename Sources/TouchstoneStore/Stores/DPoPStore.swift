public import Foundation

/// The `jti` of accepted DPoP proofs (RFC 9449 §11.1), shared by every instance on the database: a proof whose key and
/// `jti` were seen before is a replay, on this instance or another.
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol DPoPStore: Sendable {
    /// Records the proof's `jti` for the key `thumbprint` until `expiresAt`, in one statement (the check and the record
    /// cannot be split by a concurrent request on another instance); false when it was recorded already.
    func recordDPoPProof(thumbprint: String, jti: String, expiresAt: Date) async throws -> Bool
}
