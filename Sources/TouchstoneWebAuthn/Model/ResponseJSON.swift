import TouchstoneCrypto

/// `RegistrationResponseJSON` (WebAuthn Level 3 §5.1): `credential.toJSON()` after `navigator.credentials.create()`.
public struct RegistrationResponseJSON: Decodable, Sendable {
    public struct Response: Decodable, Sendable {
        public var clientDataJSON: String
        public var attestationObject: String
        public var transports: [String]?
    }

    public var id: String
    public var rawId: String
    public var type: String
    public var response: Response

    /// The decoded binary fields.
    public func decoded() throws(WebAuthnError) -> (credentialId: [UInt8], clientDataJSON: [UInt8], attestationObject: [UInt8]) {
        (
            try decodeField(self.rawId, "rawId"),
            try decodeField(self.response.clientDataJSON, "response.clientDataJSON"),
            try decodeField(self.response.attestationObject, "response.attestationObject")
        )
    }
}

/// `AuthenticationResponseJSON` (WebAuthn Level 3 §5.1): `credential.toJSON()` after `navigator.credentials.get()`.
public struct AuthenticationResponseJSON: Decodable, Sendable {
    public struct Response: Decodable, Sendable {
        public var clientDataJSON: String
        public var authenticatorData: String
        public var signature: String
        public var userHandle: String?
    }

    public var id: String
    public var rawId: String
    public var type: String
    public var response: Response

    /// The decoded binary fields; an empty `userHandle` counts as absent.
    public func decoded() throws(WebAuthnError) -> (
        credentialId: [UInt8], clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8], userHandle: [UInt8]?
    ) {
        var userHandle: [UInt8]?
        if let text = self.response.userHandle, !text.isEmpty { userHandle = try decodeField(text, "response.userHandle") }
        return (
            try decodeField(self.rawId, "rawId"),
            try decodeField(self.response.clientDataJSON, "response.clientDataJSON"),
            try decodeField(self.response.authenticatorData, "response.authenticatorData"),
            try decodeField(self.response.signature, "response.signature"),
            userHandle
        )
    }
}

private func decodeField(_ text: String, _ name: String) throws(WebAuthnError) -> [UInt8] {
    guard let bytes = Base64.decode(text, maxDecodedLength: 64 * 1024) else {
        throw .malformed("\(name) is not base64url")
    }
    return bytes
}
