public import Foundation
public import TouchstoneStore

/// A user store that forwards every call to another, and first runs a test's hook when a user is read by id or by
/// address: a lookup that stalls (a process about to die) or fails (a database going down) at one chosen point.
/// ``ComposedStore`` puts it in place of the store's own users.
public final class InterceptedUsers: UserStore, Sendable {
    let inner: any TouchstoneStore
    let byId: @Sendable () async throws -> Void
    let byEmail: @Sendable () async throws -> Void

    public init(
        _ inner: any TouchstoneStore,
        byId: @escaping @Sendable () async throws -> Void = {},
        byEmail: @escaping @Sendable () async throws -> Void = {}
    ) {
        self.inner = inner
        self.byId = byId
        self.byEmail = byEmail
    }

    public func user(id: String) async throws -> UserRecord? {
        try await self.byId()
        return try await self.inner.user(id: id)
    }
    public func user(email: String) async throws -> UserRecord? {
        try await self.byEmail()
        return try await self.inner.user(email: email)
    }
    public func insertUser(_ user: UserRecord) async throws { try await self.inner.insertUser(user) }
    public func setRequireDeviceBoundPasskeys(userId: String, required: Bool) async throws -> Bool {
        try await self.inner.setRequireDeviceBoundPasskeys(userId: userId, required: required)
    }
    public func users(emailContaining: String?, afterId: String?, limit: Int) async throws -> [UserRecord] {
        try await self.inner.users(emailContaining: emailContaining, afterId: afterId, limit: limit)
    }
    public func updatePassword(userId: String, passwordHash: String?) async throws -> Bool {
        try await self.inner.updatePassword(userId: userId, passwordHash: passwordHash)
    }
    public func lockUser(id: String) async throws -> Bool { try await self.inner.lockUser(id: id) }
    public func credentials(userId: String) async throws -> CredentialSummary { try await self.inner.credentials(userId: userId) }
    public func deleteUser(id: String, at: Date) async throws -> Bool { try await self.inner.deleteUser(id: id, at: at) }
}
