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

extension AuthenticationResponseJSON {
    /// Why a response document does not have the expected shape; the message names the field.
    public struct ShapeError: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Parses the JSON that `PublicKeyCredential.toJSON()` produces for an assertion, with the strict ``JSONValue``
    /// parser (the same fields and rules as the `Decodable` conformance; unknown fields are ignored).
    public init(json bytes: [UInt8]) throws(ShapeError) {
        guard let document = try? JSONValue(parsing: bytes) else { throw ShapeError(description: "request body is not valid JSON") }
        guard case .object(let object) = document else { throw ShapeError(description: "request body must be a JSON object") }
        func string(_ object: JSONObject, _ key: String, path: String) throws(ShapeError) -> String {
            guard let value = object[key] else { throw ShapeError(description: "missing field '\(path)'") }
            guard case .string(let text) = value else { throw ShapeError(description: "field '\(path)' has the wrong type") }
            return text
        }
        guard let responseValue = object["response"] else { throw ShapeError(description: "missing field 'response'") }
        guard case .object(let response) = responseValue else { throw ShapeError(description: "field 'response' has the wrong type") }
        var userHandle: String?
        switch response["userHandle"] {
        case nil, .null?: break
        case .string(let text)?: userHandle = text
        default: throw ShapeError(description: "field 'response.userHandle' has the wrong type")
        }
        self.init(
            id: try string(object, "id", path: "id"),
            rawId: try string(object, "rawId", path: "rawId"),
            type: try string(object, "type", path: "type"),
            response: Response(
                clientDataJSON: try string(response, "clientDataJSON", path: "response.clientDataJSON"),
                authenticatorData: try string(response, "authenticatorData", path: "response.authenticatorData"),
                signature: try string(response, "signature", path: "response.signature"),
                userHandle: userHandle
            )
        )
    }
}

private func decodeField(_ text: String, _ name: String) throws(WebAuthnError) -> [UInt8] {
    guard let bytes = Base64.decode(text, maxDecodedLength: 64 * 1024) else {
        throw .malformed("\(name) is not base64url")
    }
    return bytes
}
