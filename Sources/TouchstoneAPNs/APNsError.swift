/// Why a push could not be sent.
public struct APNsError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// The provider key cannot be used.
        case invalidKey
        /// No answer: the connection failed or timed out.
        case transport
    }

    public let code: Code
    public let message: String

    public static func invalidKey(_ message: String) -> Self { Self(code: .invalidKey, message: message) }
    public static func transport(_ message: String) -> Self { Self(code: .transport, message: message) }

    public var description: String { "\(self.code.rawValue): \(self.message)" }

    /// Compared by code, so tests compare codes.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.code) }
}
