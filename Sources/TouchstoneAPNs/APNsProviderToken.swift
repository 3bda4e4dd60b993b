public import Foundation
import Crypto
import JWTKit

/// The provider authentication token of Apple's push service: an ES256 JWT `{"alg":"ES256","kid":<key id>}`
/// `{"iss":<team id>,"iat":<seconds>}` signed with the `.p8` key from the developer account.
///
/// Apple refuses a token older than an hour and one renewed more often than every 20 minutes, so a token is kept and
/// reused for ``lifetime`` (40 minutes), then made anew.
public actor APNsProviderToken {
    /// How long one token is used.
    public static let lifetime: TimeInterval = 40 * 60

    private let keys: JWTKeyCollection
    private let keyId: String
    private let teamId: String
    private let now: @Sendable () -> Date
    private var current: (token: String, issuedAt: Date)?

    /// - Parameters:
    ///   - keyPEM: The provider key (PKCS #8 PEM, as Apple gives it in the `.p8` file).
    ///   - keyId: Its 10-character key id.
    ///   - teamId: The developer team's id.
    /// - Throws: ``APNsError`` when the key is not a P-256 private key.
    public init(keyPEM: String, keyId: String, teamId: String, now: @escaping @Sendable () -> Date = { Date() }) async throws {
        let key: ES256PrivateKey
        do {
            key = try ES256PrivateKey(pem: keyPEM)
        } catch {
            throw APNsError.invalidKey("the APNs key is not a P-256 private key in PEM (PKCS #8, the .p8 file)")
        }
        self.keys = JWTKeyCollection()
        await self.keys.add(ecdsa: key, kid: JWKIdentifier(string: keyId))
        self.keyId = keyId
        self.teamId = teamId
        self.now = now
    }

    /// The token to send now: the kept one, or a new one after ``lifetime`` (or after ``invalidate()``).
    public func token() async throws -> String {
        let now = self.now()
        if let current, now.timeIntervalSince(current.issuedAt) < Self.lifetime, now >= current.issuedAt {
            return current.token
        }
        let claims = Claims(iss: self.teamId, iat: Int64(now.timeIntervalSince1970.rounded(.down)))
        let token = try await self.keys.sign(claims, kid: JWKIdentifier(string: self.keyId))
        self.current = (token, now)
        return token
    }

    /// Drops the kept token (Apple answered `ExpiredProviderToken`): the next call makes a new one.
    public func invalidate() {
        self.current = nil
    }

    struct Claims: JWTPayload {
        var iss: String
        var iat: Int64

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
