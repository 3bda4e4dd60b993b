import Foundation
import TouchstoneCrypto

/// The client data the browser collected and the authenticator signed a hash of (WebAuthn Level 3 §5.8.1).
///
/// https://www.w3.org/TR/webauthn-3/#dictionary-client-data
public struct CollectedClientData: Sendable, Hashable {
    public let type: String
    /// The challenge, decoded from its base64url form.
    public let challenge: [UInt8]
    public let origin: String
    public let crossOrigin: Bool
    public let topOrigin: String?
    /// The raw JSON, whose SHA-256 was signed.
    public let rawValue: [UInt8]

    private struct Fields: Decodable {
        var type: String
        var challenge: String
        var origin: String
        var crossOrigin: Bool?
        var topOrigin: String?
    }

    public init(bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count <= 64 * 1024 else { throw .malformed("clientDataJSON is too large") }
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: Data(bytes))
        } catch let DecodingError.keyNotFound(key, _) {
            throw .malformed("clientDataJSON has no \(key.stringValue)")
        } catch let DecodingError.typeMismatch(_, context) {
            throw .malformed("clientDataJSON \(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type")
        } catch {
            throw .malformed("clientDataJSON is not a JSON object")
        }
        guard let challenge = Base64.decode(fields.challenge), !challenge.isEmpty else {
            throw .malformed("clientDataJSON challenge is not base64url")
        }
        self.type = fields.type
        self.challenge = challenge
        self.origin = fields.origin
        self.crossOrigin = fields.crossOrigin ?? false
        self.topOrigin = fields.topOrigin
        self.rawValue = bytes
    }
}
