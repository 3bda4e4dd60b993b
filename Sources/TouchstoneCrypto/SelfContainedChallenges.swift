public import Crypto

/// Challenges that carry what they were issued for, so that issuing one stores nothing: the value holds its expiry and
/// a random nonce under a MAC that also covers a binding (the registration it was issued to). Whoever holds the key can
/// tell an issued challenge from any other string, for which binding it was issued, and until when it may be answered;
/// single use is the caller's to enforce (Touchstone records a challenge when it is answered).
///
/// Format, base64url without padding (55 characters): `0x01` (version) ‖ expiry (milliseconds since 1970, 8 bytes
/// big-endian) ‖ nonce (16 random bytes) ‖ tag (the first 16 bytes of HMAC-SHA256, RFC 2104, over the 25 bytes before
/// it, the binding's UTF-8 length as 4 bytes big-endian and the binding).
public struct SelfContainedChallenges: Sendable {
    /// The nonce's length in bytes (128 bits).
    public static let nonceLength = 16
    /// The length of an issued challenge, in characters.
    public static let encodedLength = 55

    static let version: UInt8 = 1
    static let tagLength = 16
    static let bodyLength = 1 + 8 + nonceLength

    private let key: SymmetricKey

    /// Challenges under `key` (at least 32 bytes of key material, used only for this).
    public init(key: SymmetricKey) {
        self.key = key
    }

    /// Challenges under a key derived from `secret` with HKDF-SHA256 (RFC 5869) for `purpose`, so that one secret can
    /// serve several uses without one key serving two.
    public init(derivingFrom secret: SymmetricKey, purpose: String) {
        self.key = HKDF<SHA256>.deriveKey(inputKeyMaterial: secret, info: Array(purpose.utf8), outputByteCount: 32)
    }

    /// A challenge for `binding` that may be answered until `expiresAtMillis`; `nonce` must be ``nonceLength`` fresh
    /// random bytes.
    public func issue(for binding: String, expiresAtMillis: Int64, nonce: [UInt8]) -> String {
        precondition(nonce.count == Self.nonceLength, "a challenge's nonce is \(Self.nonceLength) bytes")
        var bytes = [UInt8]()
        bytes.reserveCapacity(Self.bodyLength + Self.tagLength)
        bytes.append(Self.version)
        let expiry = UInt64(bitPattern: expiresAtMillis)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: expiry >> UInt64(shift))) }
        bytes.append(contentsOf: nonce)
        bytes.append(contentsOf: self.tag(body: bytes, binding: binding))
        return Base64.urlEncode(bytes)
    }

    /// Whether `challenge` has the form of an issued challenge (length, encoding, version), whoever issued it and for
    /// whatever binding: what can be told without the binding.
    public static func isWellFormed(_ challenge: String) -> Bool {
        Self.wellFormedBytes(challenge) != nil
    }

    /// The bytes of a challenge of the issued form, decoded once; `nil` for anything else.
    private static func wellFormedBytes(_ challenge: String) -> [UInt8]? {
        guard challenge.utf8.count == Self.encodedLength, let bytes = Base64.urlDecodeCanonical(challenge),
            bytes.count == Self.bodyLength + Self.tagLength, bytes[0] == Self.version
        else {
            return nil
        }
        return bytes
    }

    /// The expiry (milliseconds since 1970) of `challenge` when it is one this key issued for `binding`; `nil` for
    /// anything else (another binding, another key, altered or malformed text). Expiry is for the caller to compare.
    public func expiry(of challenge: String, for binding: String) -> Int64? {
        guard let bytes = Self.wellFormedBytes(challenge) else { return nil }
        let body = Array(bytes[..<Self.bodyLength])
        let expected = self.tag(body: body, binding: binding)
        guard ConstantTime.equal(expected, Array(bytes[Self.bodyLength...])) else { return nil }
        var expiry: UInt64 = 0
        for byte in bytes[1..<9] { expiry = expiry << 8 | UInt64(byte) }
        return Int64(bitPattern: expiry)
    }

    private func tag(body: [UInt8], binding: String) -> [UInt8] {
        var mac = HMAC<SHA256>(key: self.key)
        mac.update(data: body)
        let bindingBytes = Array(binding.utf8)
        let length = UInt32(truncatingIfNeeded: bindingBytes.count)
        mac.update(data: (0..<4).map { UInt8(truncatingIfNeeded: length >> (24 - 8 * $0)) })
        mac.update(data: bindingBytes)
        return Array(mac.finalize().prefix(Self.tagLength))
    }
}
