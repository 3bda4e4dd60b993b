public import Foundation

/// The FIDO Metadata Service BLOB in use.
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol MetadataStore: Sendable {
    /// The metadata BLOB in use, if one was stored.
    func metadataBLOB() async throws -> MetadataBLOBRecord?

    /// The stored BLOB's number alone (what instances poll: the BLOB itself is megabytes).
    func metadataBLOBNumber() async throws -> Int64?

    /// Stores a BLOB unless the stored one's number is as large or larger; returns whether this call stored it (so
    /// of instances racing with the same BLOB one stores it, and an older BLOB never replaces a newer one).
    func saveMetadataBLOB(_ record: MetadataBLOBRecord) async throws -> Bool
}
