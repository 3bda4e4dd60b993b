public import Foundation

/// One of the account's live sessions, as `GET /v1/session/sessions` lists it (no token).
public struct SessionSummary: Sendable, Hashable, Codable {
    /// The session's id (its tokens' `sid`).
    public var id: String
    public var createdAt: String
    /// When it was last used, to the minute (nil for sessions opened before it was kept).
    public var lastSeenAt: String?
    public var methods: [String]
    /// The client address it was opened from.
    public var address: String?
    /// The `User-Agent` it was opened with (at most 200 characters).
    public var userAgent: String?
    /// The OpenID client holding tokens from it, if any.
    public var client: String?
    /// Whether this is the caller's session.
    public var current: Bool
}

// The account as its owner's (issue #42): sessions, the data export, deletion.
extension TouchstoneClient {
    /// `GET /v1/session/sessions`: where the account is signed in.
    public func sessions(token: String) async throws -> [SessionSummary] {
        struct Body: Decodable { var sessions: [SessionSummary] }
        let response = try await self.exchange("GET", "/v1/session/sessions", token: token, raw: nil)
        return try self.decode(Body.self, response, path: "/v1/session/sessions").sessions
    }

    /// `DELETE /v1/session/sessions/{id}`: ends one of the account's sessions (the caller's own included).
    public func endSession(id: String, token: String) async throws {
        _ = try await self.exchange("DELETE", "/v1/session/sessions/\(Self.pathComponent(id))", token: token, raw: nil)
    }

    /// `POST /v1/session/sessions/revoke-others`: ends every other session of the account; returns how many.
    public func signOutOtherSessions(token: String) async throws -> Int {
        struct Body: Decodable { var revokedSessions: Int }
        let response = try await self.exchange("POST", "/v1/session/sessions/revoke-others", token: token, raw: nil)
        return try self.decode(Body.self, response, path: "/v1/session/sessions/revoke-others").revokedSessions
    }

    /// `GET /v1/users/me/export`: everything the server holds about the user, as the JSON document it sends (a
    /// password or passkey sign-in within the last few minutes is needed).
    public func exportAccountData(token: String) async throws -> Data {
        try await self.exchange("GET", "/v1/users/me/export", token: token, raw: nil).body
    }

    /// `DELETE /v1/users/me`: deletes the account; `confirmEmail` is its address typed again (a password or passkey
    /// sign-in within the last few minutes is needed). Every session ends with it.
    public func deleteAccount(confirmEmail: String, token: String) async throws {
        let body = try JSONEncoder().encode(["confirmEmail": confirmEmail])
        _ = try await self.exchange("DELETE", "/v1/users/me", token: token, raw: body)
    }
}
