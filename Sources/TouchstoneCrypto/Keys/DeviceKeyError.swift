/// Why a device public key or signature could not be used.
///
/// Compare against the static members; new reasons may be added without breaking callers.
public struct DeviceKeyError: Error, Hashable, CustomStringConvertible, Sendable {
    private enum Code: Hashable, Sendable {
        case invalidEncoding
        case invalidPublicKey
        case weakKey
        case algorithmMismatch
    }

    private let code: Code
    /// A human-readable reason, safe to show to the client that sent the key.
    public let reason: String

    private init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The text is neither PEM nor base64 of either alphabet.
    public static func invalidEncoding(_ reason: String) -> Self { .init(.invalidEncoding, reason) }
    /// The bytes do not form a public key of the requested algorithm (bad structure, point not on the curve...).
    public static func invalidPublicKey(_ reason: String) -> Self { .init(.invalidPublicKey, reason) }
    /// The key is structurally valid but too weak to accept (an RSA modulus under 2048 bits, a small exponent).
    public static func weakKey(_ reason: String) -> Self { .init(.weakKey, reason) }
    /// The key is valid but belongs to another algorithm than the one declared.
    public static func algorithmMismatch(_ reason: String) -> Self { .init(.algorithmMismatch, reason) }

    /// Errors compare by kind only, so tests can write `#expect(throws: DeviceKeyError.weakKey(""))`-style checks with
    /// ``isSameKind(as:)``.
    public func isSameKind(as other: DeviceKeyError) -> Bool { self.code == other.code }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.code) }

    public var description: String { self.reason }
}
