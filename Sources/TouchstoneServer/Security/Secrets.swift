import Crypto
import Foundation
import TouchstoneCrypto

/// Generation and hashing of the random values the server hands out.
struct Secrets: Sendable {
    let randomBytes: @Sendable (Int) -> [UInt8]

    /// A bearer token: 32 random bytes, base64url.
    func newToken() -> String { Base64.urlEncode(self.randomBytes(32)) }

    /// A challenge: 32 random bytes, base64url (43 characters).
    func newChallenge() -> String { Base64.urlEncode(self.randomBytes(32)) }

    /// A resource identifier: a random (version 4) UUID, lowercase.
    func newIdentifier() -> String {
        var bytes = self.randomBytes(16)
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let uuid = UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
        ))
        return uuid.uuidString.lowercased()
    }

    /// How a token is stored: lowercase hex SHA-256. Tokens carry 256 bits of entropy, so a fast hash suffices.
    static func hash(token: String) -> String {
        Hex.encode(SHA256.hash(data: Array(token.utf8)))
    }
}
