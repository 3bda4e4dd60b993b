import Crypto
public import Foundation

/// An endpoint's signing secret: `whsec_` and the base64 of its key bytes (Standard Webhooks, "Signature scheme").
public struct WebhookSecret: Sendable, Hashable, CustomStringConvertible {
    public static let prefix = "whsec_"
    /// How many random bytes a new secret has (the specification asks for 24 to 64).
    public static let generatedLength = 32

    /// The HMAC key.
    public let key: [UInt8]

    public init(key: [UInt8]) {
        self.key = key
    }

    /// Reads `whsec_<base64>`.
    public init(_ text: String) throws(WebhookError) {
        guard text.hasPrefix(Self.prefix), let data = Data(base64Encoded: String(text.dropFirst(Self.prefix.count))),
            (24...64).contains(data.count)
        else {
            throw .invalidSecret("a webhook secret is 'whsec_' and the base64 of 24 to 64 bytes")
        }
        self.key = Array(data)
    }

    /// A new secret of ``generatedLength`` bytes from `randomBytes`.
    public static func generate(randomBytes: (Int) -> [UInt8]) -> WebhookSecret {
        WebhookSecret(key: randomBytes(Self.generatedLength))
    }

    /// `whsec_<base64>`: what the receiver configures its verifier with.
    public var description: String { Self.prefix + Data(self.key).base64EncodedString() }
}

/// The Standard Webhooks signature (standardwebhooks.com, "Signature scheme"): `v1,` and the base64 of
/// HMAC-SHA256(secret, `<webhook-id>.<webhook-timestamp>.<body>`), several separated by spaces while a secret is
/// being rotated.
public enum WebhookSignature {
    /// The `webhook-signature` header's value for `secrets` (the current one first).
    public static func header(id: String, timestamp: Int64, body: [UInt8], secrets: [WebhookSecret]) -> String {
        secrets.map { "v1," + Self.sign(id: id, timestamp: timestamp, body: body, secret: $0) }.joined(separator: " ")
    }

    /// The base64 HMAC of one secret.
    public static func sign(id: String, timestamp: Int64, body: [UInt8], secret: WebhookSecret) -> String {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: secret.key))
        hmac.update(data: Array("\(id).\(timestamp).".utf8))
        hmac.update(data: body)
        return Data(hmac.finalize()).base64EncodedString()
    }

    /// How far a message's timestamp may be from the receiver's clock (the specification's recommendation).
    public static let tolerance: TimeInterval = 5 * 60

    /// Verifies a received message as a receiver must: the timestamp within ``tolerance`` of `now`, and one of the
    /// `v1` signatures of the header made with `secret` (compared in constant time).
    public static func isValid(
        id: String,
        timestamp: String,
        signatures: String,
        body: [UInt8],
        secret: WebhookSecret,
        now: Date
    ) -> Bool {
        guard let seconds = Int64(timestamp), abs(now.timeIntervalSince1970 - TimeInterval(seconds)) <= Self.tolerance else {
            return false
        }
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: secret.key))
        hmac.update(data: Array("\(id).\(seconds).".utf8))
        hmac.update(data: body)
        let expected = Array(hmac.finalize())
        for entry in signatures.split(separator: " ") {
            guard entry.hasPrefix("v1,"), let given = Data(base64Encoded: String(entry.dropFirst(3))), given.count == expected.count else { continue }
            var difference: UInt8 = 0
            for (a, b) in zip(given, expected) { difference |= a ^ b }
            if difference == 0 { return true }
        }
        return false
    }
}
