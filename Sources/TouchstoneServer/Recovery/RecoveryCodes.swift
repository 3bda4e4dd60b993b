import Crypto
import Foundation
import TouchstoneCrypto

/// Recovery codes (issue #33): ten single-use codes of ten characters from Crockford's base32 alphabet (digits and
/// lowercase letters without i, l, o and u: nothing to confuse), shown as `xxxxx-xxxxx`, 50 random bits each, stored
/// only as HMAC-SHA-256 under a key derived from the key-encryption key and bound to the user.
struct RecoveryCodes: Sendable {
    static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz")
    static let count = 10
    static let length = 10

    let key: SymmetricKey
    let randomBytes: @Sendable (Int) -> [UInt8]

    init(keyEncryptionKey: SymmetricKey, randomBytes: @escaping @Sendable (Int) -> [UInt8]) {
        self.key = HKDF<SHA256>.deriveKey(inputKeyMaterial: keyEncryptionKey, info: Array("touchstone recovery codes v1".utf8), outputByteCount: 32)
        self.randomBytes = randomBytes
    }

    /// Ten new codes as shown (`k7m2p-9xq4r`); 32 letters divide 256, so each random byte's low five bits are uniform.
    func generate() -> [String] {
        (0..<Self.count).map { _ in
            let letters = self.randomBytes(Self.length).map { Self.alphabet[Int($0 & 31)] }
            return String(letters[0..<5]) + "-" + String(letters[5...])
        }
    }

    /// A code as typed: hyphens, spaces and case ignored, and Crockford's readings of look-alikes (`i`, `l` as `1`,
    /// `o` as `0`); nil when it is not ten letters of the alphabet.
    static func normalize(_ text: String) -> String? {
        // ASCII only: lowercasing other scripts can give ASCII letters (the Kelvin sign K becomes k).
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        var letters: [Character] = []
        for character in text.lowercased() where character != "-" && character != " " {
            switch character {
            case "i", "l": letters.append("1")
            case "o": letters.append("0")
            default:
                guard Self.alphabet.contains(character) else { return nil }
                letters.append(character)
            }
            if letters.count > Self.length { return nil }
        }
        return letters.count == Self.length ? String(letters) : nil
    }

    /// The stored form of a normalised code for `userId`.
    func hash(_ normalized: String, userId: String) -> String {
        Hex.encode(HMAC<SHA256>.authenticationCode(for: Array("\(userId)\u{0}\(normalized)".utf8), using: self.key))
    }
}
