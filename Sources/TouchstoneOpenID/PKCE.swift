import Crypto
import TouchstoneCrypto

/// Proof Key for Code Exchange (RFC 7636), `S256` only: the provider requires it of every client and refuses
/// `plain` (OAuth 2.1; RFC 9700 §2.1.1).
public enum PKCE {
    /// The only method accepted.
    public static let method = "S256"

    /// Whether `verifier` has the form RFC 7636 §4.1 gives it: 43 to 128 characters of `A-Z a-z 0-9 - . _ ~`.
    public static func isValidVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count) && verifier.utf8.allSatisfy(Self.isUnreserved)
    }

    /// Whether `challenge` can be an `S256` challenge: the 43 base64url characters (no padding) of a SHA-256 digest.
    public static func isValidChallenge(_ challenge: String) -> Bool {
        challenge.utf8.count == 43 && challenge.utf8.allSatisfy { Self.isBase64URL($0) }
            && Base64.decode(challenge, maxDecodedLength: 32)?.count == 32
    }

    /// `BASE64URL(SHA256(ASCII(verifier)))`, the challenge a verifier answers (RFC 7636 §4.2).
    public static func challenge(of verifier: String) -> String {
        Base64.urlEncode(Array(SHA256.hash(data: Array(verifier.utf8))))
    }

    /// Whether `verifier` is well formed and answers `challenge`, compared in constant time (RFC 7636 §4.6).
    public static func verify(verifier: String, challenge: String) -> Bool {
        guard Self.isValidVerifier(verifier) else { return false }
        return ConstantTime.equal(Array(Self.challenge(of: verifier).utf8), Array(challenge.utf8))
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        Self.isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "~")
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        Self.isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
}
