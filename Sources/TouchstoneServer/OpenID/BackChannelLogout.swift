import AsyncHTTPClient
import Foundation
import JWTKit
import Logging
import NIOCore
import NIOHTTP1
import TouchstoneCrypto
import TouchstoneOpenID
import TouchstoneStore

/// OpenID Connect Back-Channel Logout 1.0: when a session that clients hold tokens for ends, each such client with a
/// `backchannel_logout_uri` gets a logout token. The store marks the notices due in the transaction that ends the
/// session; this delivers them, retrying with backoff, from any instance.
struct BackChannelLogout: Sendable {
    let provider: OpenIDProvider
    let logger: Logger
    /// Posts a form body to a URL and answers the HTTP status (injected in tests).
    let post: @Sendable (_ url: String, _ body: String) async throws -> Int

    /// Attempts before a notice is given up (about 17 minutes of backoff: 1, 2, 4, ... 512 seconds).
    static let maximumAttempts = 10

    /// The logout token's claims (§2.4): never a `nonce`.
    struct LogoutTokenClaims: JWTPayload {
        var iss: String
        var sub: String
        var aud: String
        var iat: Int64
        var exp: Int64
        var jti: String
        var sid: String
        var events: [String: [String: String]]

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// Delivers what is due now; returns how many were delivered.
    @discardableResult
    func deliverDue(limit: Int = 50) async throws -> Int {
        let now = self.provider.now()
        var delivered = 0
        for notice in try await self.provider.store.dueLogoutNotices(now: now, limit: limit) {
            let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
            let claims = LogoutTokenClaims(
                iss: self.provider.issuer,
                sub: notice.userId,
                aud: notice.clientId,
                iat: issuedAt,
                exp: issuedAt + 120,
                jti: Base64.urlEncode(self.provider.secrets.randomBytes(16)),
                sid: notice.sessionId,
                events: ["http://schemas.openid.net/event/backchannel-logout": [:]]
            )
            var failure: String?
            do {
                let token = try await self.provider.ring.sign(claims, type: "logout+jwt").token
                let status = try await self.post(notice.backchannelLogoutURI, "logout_token=" + FormParameters.encode(token))
                if !(200..<300).contains(status) { failure = "HTTP \(status)" }
            } catch {
                failure = "\(type(of: error))"
            }
            if let failure {
                let attempts = notice.attempts + 1
                let retryAt = attempts >= Self.maximumAttempts ? nil : now.addingTimeInterval(TimeInterval(1 << min(attempts - 1, 9)))
                try await self.provider.store.recordLogoutNotice(
                    clientId: notice.clientId, sessionId: notice.sessionId, delivered: false, retryAt: retryAt, error: failure)
                self.logger.warning(
                    "back-channel logout failed",
                    metadata: ["client": "\(notice.clientId)", "attempt": "\(attempts)", "error": "\(failure)"]
                )
                if retryAt == nil {
                    try await self.provider.audit.record(.backchannelLogoutFailed, .failure, userId: notice.userId,
                        reason: "client \(notice.clientId): \(failure) after \(attempts) attempts")
                }
            } else {
                try await self.provider.store.recordLogoutNotice(
                    clientId: notice.clientId, sessionId: notice.sessionId, delivered: true, retryAt: nil, error: nil)
                delivered += 1
            }
        }
        return delivered
    }

    /// The live delivery: a POST with a 5-second deadline, no redirects followed (a client of its own per batch: the
    /// deliveries are rare).
    static let livePost: @Sendable (String, String) async throws -> Int = { url, body in
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        do {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await client.execute(request, timeout: .seconds(5))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            try await client.shutdown()
            return Int(response.status.code)
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}
