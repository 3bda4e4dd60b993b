import Foundation
import Hummingbird
import TouchstoneStore

/// Reading the audit trail a page at a time: `limit`, an opaque `cursor`, and the admin filters.
enum AuditPaging {
    /// Builds a query from `limit`, `cursor`, `type`, `since` and `until` (RFC 3339); 400 `invalid_request` naming the
    /// parameter that does not parse.
    static func query(from parameters: Parameters, maximumLimit: Int) throws -> AuditEventQuery {
        var query = AuditEventQuery(limit: 50)
        if let text = parameters["limit"] {
            guard let limit = Int(text), (1...maximumLimit).contains(limit) else {
                throw APIError.invalidRequest("parameter 'limit' must be between 1 and \(maximumLimit)")
            }
            query.limit = limit
        }
        if let text = parameters["cursor"] {
            guard let cursor = Self.decodeCursor(String(text)) else { throw APIError.invalidRequest("parameter 'cursor' is invalid") }
            query.after = cursor
        }
        if let text = parameters["type"] { query.type = String(text.prefix(64)) }
        if let text = parameters["since"] {
            guard let date = Date(rfc3339: String(text)) else { throw APIError.invalidRequest("parameter 'since' is not an RFC 3339 time") }
            query.since = date
        }
        if let text = parameters["until"] {
            guard let date = Date(rfc3339: String(text)) else { throw APIError.invalidRequest("parameter 'until' is not an RFC 3339 time") }
            query.until = date
        }
        return query
    }

    /// Reads one page; the cursor is present when there may be more.
    static func page(_ query: AuditEventQuery, store: any AuditStore) async throws -> AuditEventPage {
        var probe = query
        probe.limit = query.limit + 1
        let events = try await store.auditEvents(probe)
        let page = Array(events.prefix(query.limit))
        let next = events.count > query.limit ? page.last.map { Self.encodeCursor(AuditCursor(occurredAt: $0.occurredAt, id: $0.id)) } : nil
        return AuditEventPage(events: page.map(AuditEventResource.init), nextCursor: next)
    }

    static func encodeCursor(_ cursor: AuditCursor) -> String {
        "\(Int64((cursor.occurredAt.timeIntervalSince1970 * 1000).rounded()))_\(cursor.id)"
    }

    static func decodeCursor(_ text: String) -> AuditCursor? {
        guard text.utf8.count <= 128, let separator = text.firstIndex(of: "_"), let millis = Int64(text[..<separator]) else {
            return nil
        }
        let id = String(text[text.index(after: separator)...])
        guard !id.isEmpty else { return nil }
        return AuditCursor(occurredAt: Date(timeIntervalSince1970: Double(millis) / 1000), id: id)
    }
}
