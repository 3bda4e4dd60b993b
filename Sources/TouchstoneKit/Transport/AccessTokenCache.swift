public import Foundation

/// An access token and when it expires (by the client's clock, from `expiresIn`).
public struct AccessToken: Sendable, Hashable {
    public var token: String
    public var expiresAt: Date

    public init(token: String, expiresAt: Date) {
        self.token = token
        self.expiresAt = expiresAt
    }
}

/// The access tokens a client holds, by session, and the requests under way for new ones.
actor AccessTokenCache {
    nonisolated let now: @Sendable () -> Date
    private var tokens: [String: AccessToken] = [:]
    private var pending: [String: Task<AccessToken, any Error>] = [:]

    init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// The cached token for `session` while it has more than `minimumLifetime` left; else the result of `fetch`, which
    /// runs once for all callers waiting at the same time.
    func token(
        for session: String,
        minimumLifetime: TimeInterval,
        fetch: @escaping @Sendable () async throws -> AccessToken
    ) async throws -> AccessToken {
        if let cached = self.tokens[session], cached.expiresAt.timeIntervalSince(self.now()) > minimumLifetime {
            return cached
        }
        let task: Task<AccessToken, any Error>
        if let running = self.pending[session] {
            task = running
        } else {
            task = Task { try await fetch() }
            self.pending[session] = task
        }
        defer { if self.pending[session] == task { self.pending[session] = nil } }
        do {
            let token = try await task.value
            let now = self.now()
            self.tokens = self.tokens.filter { $0.value.expiresAt > now }
            self.tokens[session] = token
            return token
        } catch {
            // A session that ended has no token worth keeping.
            self.tokens[session] = nil
            throw error
        }
    }
}
