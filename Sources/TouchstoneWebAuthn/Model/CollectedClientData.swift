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

    public init(bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count <= 64 * 1024 else { throw .malformed("clientDataJSON is too large") }
        guard let document = try? JSONValue(parsing: bytes), case .object(let object) = document else {
            throw .malformed("clientDataJSON is not a JSON object")
        }
        func string(_ key: String) throws(WebAuthnError) -> String {
            guard let value = object[key] else { throw .malformed("clientDataJSON has no \(key)") }
            guard case .string(let text) = value else { throw .malformed("clientDataJSON \(key) has the wrong type") }
            return text
        }
        let type = try string("type")
        let challengeText = try string("challenge")
        let origin = try string("origin")
        var crossOrigin = false
        switch object["crossOrigin"] {
        case nil, .null?: break
        case .bool(let value)?: crossOrigin = value
        default: throw .malformed("clientDataJSON crossOrigin has the wrong type")
        }
        var topOrigin: String?
        switch object["topOrigin"] {
        case nil, .null?: break
        case .string(let value)?: topOrigin = value
        default: throw .malformed("clientDataJSON topOrigin has the wrong type")
        }
        // tokenBinding (Levels 1–2; reserved in Level 3): Touchstone uses no Token Binding, but an object whose status is
        // not one of TokenBindingStatus's values ("present", "supported") is malformed, as Level 2 §5.8.1 defines it.
        // Legacy clients that sent a string ("unused") are let through, as other relying parties do.
        if case .object(let binding)? = object["tokenBinding"] {
            guard case .string(let status)? = binding["status"], status == "present" || status == "supported" else {
                throw .malformed("clientDataJSON tokenBinding.status must be present or supported")
            }
        }
        guard let challenge = Base64.decode(challengeText), !challenge.isEmpty else {
            throw .malformed("clientDataJSON challenge is not base64url")
        }
        self.type = type
        self.challenge = challenge
        self.origin = origin
        self.crossOrigin = crossOrigin
        self.topOrigin = topOrigin
        self.rawValue = bytes
    }
}
