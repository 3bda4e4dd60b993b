/// Why a store operation failed.
///
/// Compare against the static members; new reasons may be added without breaking callers.
public struct StoreError: Error, Hashable, CustomStringConvertible, Sendable {
    private enum Code: Hashable, Sendable {
        case conflict
        case notFound
        case unavailable
        case migrationFailed
    }

    private let code: Code
    /// Detail for logs; not meant for API clients.
    public let reason: String

    private init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// A uniqueness rule was violated (email taken, device already enrolled...).
    public static func conflict(_ reason: String) -> Self { .init(.conflict, reason) }
    /// The record to change does not exist.
    public static func notFound(_ reason: String) -> Self { .init(.notFound, reason) }
    /// The database could not be reached or failed.
    public static func unavailable(_ reason: String) -> Self { .init(.unavailable, reason) }
    /// The schema could not be brought up to date.
    public static func migrationFailed(_ reason: String) -> Self { .init(.migrationFailed, reason) }

    public static let conflict = StoreError(.conflict, "")
    public static let notFound = StoreError(.notFound, "")
    public static let unavailable = StoreError(.unavailable, "")

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.code) }
    public var description: String { "\(self.code): \(self.reason)" }
}
