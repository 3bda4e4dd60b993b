public import Foundation
import SQLKit

// The authenticator metadata BLOB (FIDO Metadata Service) shared by every instance.
extension SQLTouchstoneStore {
    private static let metadataName = "fido-mds"

    public func metadataBLOB() async throws -> MetadataBLOBRecord? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT * FROM authenticator_metadata WHERE name = \(bind: Self.metadataName)").first().map { row in
                MetadataBLOBRecord(
                    number: try row.decode(column: "number", as: Int64.self),
                    nextUpdate: try row.date("next_update"),
                    blob: try row.decode(column: "blob", as: String.self),
                    source: try row.decode(column: "source", as: String.self),
                    storedAt: try row.date("stored_at")
                )
            }
        }
    }

    public func metadataBLOBNumber() async throws -> Int64? {
        try await self.executor.withReadOnlyDatabase { db in
            try await db.raw("SELECT number FROM authenticator_metadata WHERE name = \(bind: Self.metadataName)").first()
                .map { try $0.decode(column: "number", as: Int64.self) }
        }
    }

    public func saveMetadataBLOB(_ record: MetadataBLOBRecord) async throws -> Bool {
        try await self.executor.withDatabase { db in
            // One statement: insert, or replace only a smaller number (a concurrent save of the same BLOB stores once).
            try await db.raw(
                """
                INSERT INTO authenticator_metadata (name, number, next_update, blob, source, stored_at)
                VALUES (\(bind: Self.metadataName), \(bind: record.number), \(bind: record.nextUpdate.millis), \(bind: record.blob),
                    \(bind: record.source), \(bind: record.storedAt.millis))
                ON CONFLICT (name) DO UPDATE SET number = excluded.number, next_update = excluded.next_update,
                    blob = excluded.blob, source = excluded.source, stored_at = excluded.stored_at
                WHERE authenticator_metadata.number < excluded.number
                RETURNING name
                """
            ).first() != nil
        }
    }
}
