public import Foundation

/// Named settings every instance shares (the runtime policy, the decoy key).
///
/// One of the aggregates of ``TouchstoneStore``; `SQLTouchstoneStore` implements it on SQLite and PostgreSQL.
public protocol SettingStore: Sendable {
    /// A stored setting (the runtime policy is one, as JSON).
    func setting(name: String) async throws -> String?
    func saveSetting(name: String, value: String, at: Date) async throws

    /// Stores a setting only if it has no value yet; returns whether this call stored it.
    func insertSetting(name: String, value: String, at: Date) async throws -> Bool
}
