public import Foundation
import TouchstoneCrypto

extension VirtualAuthenticator {
    /// Why the virtual authenticator refused options.
    public struct OptionsError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Answers `PublicKeyCredentialCreationOptionsJSON` as `navigator.credentials.create()` followed by `toJSON()`
    /// would: returns the new credential and the `RegistrationResponseJSON` bytes.
    public func respond(toCreationOptions optionsJSON: [UInt8], origin: String) throws -> (Credential, response: [UInt8]) {
        guard let options = try JSONSerialization.jsonObject(with: Data(optionsJSON)) as? [String: Any],
            let rp = options["rp"] as? [String: Any], let user = options["user"] as? [String: Any],
            let userId = (user["id"] as? String).flatMap({ Base64.decode($0) }),
            let challenge = (options["challenge"] as? String).flatMap({ Base64.decode($0) })
        else {
            throw OptionsError(description: "creation options lack rp, user.id or challenge")
        }
        let rpId = (rp["id"] as? String) ?? URLComponents(string: origin)?.host ?? ""
        let offered = ((options["pubKeyCredParams"] as? [[String: Any]]) ?? []).compactMap { $0["alg"] as? Int }
        guard let algorithm = offered.compactMap(COSEAlgorithm.init(rawValue:)).first(where: { $0 == .es256 || $0 == .eddsa }) else {
            throw OptionsError(description: "none of the offered algorithms is ES256 or EdDSA")
        }
        let registration = self.register(rpId: rpId, origin: origin, challenge: challenge, userHandle: userId, algorithm: algorithm)
        let id = Base64.urlEncode(registration.credential.id)
        let response: [String: Any] = [
            "id": id, "rawId": id, "type": "public-key", "authenticatorAttachment": "platform",
            "clientExtensionResults": ["credProps": ["rk": true]],
            "response": [
                "clientDataJSON": Base64.urlEncode(registration.clientDataJSON),
                "attestationObject": Base64.urlEncode(registration.attestationObject),
                "authenticatorData": Base64.urlEncode(registration.authenticatorData),
                "transports": ["internal", "hybrid"],
                "publicKeyAlgorithm": algorithm.rawValue,
            ] as [String: Any],
        ]
        return (registration.credential, Array(try JSONSerialization.data(withJSONObject: response, options: [.sortedKeys])))
    }

    /// Answers `PublicKeyCredentialRequestOptionsJSON` as `navigator.credentials.get()` followed by `toJSON()` would,
    /// with `credential` (which must be allowed, when the options list credentials): the `AuthenticationResponseJSON`
    /// bytes.
    public func respond(toRequestOptions optionsJSON: [UInt8], credential: inout Credential, origin: String) throws -> [UInt8] {
        guard let options = try JSONSerialization.jsonObject(with: Data(optionsJSON)) as? [String: Any],
            let challenge = (options["challenge"] as? String).flatMap({ Base64.decode($0) })
        else {
            throw OptionsError(description: "request options lack a challenge")
        }
        if let rpId = options["rpId"] as? String, rpId != credential.rpId {
            throw OptionsError(description: "the credential is for \(credential.rpId), not \(rpId)")
        }
        let allowed = ((options["allowCredentials"] as? [[String: Any]]) ?? []).compactMap { ($0["id"] as? String).flatMap { Base64.decode($0) } }
        guard allowed.isEmpty || allowed.contains(credential.id) else {
            throw OptionsError(description: "the credential is not in allowCredentials")
        }
        let assertion = self.assert(&credential, origin: origin, challenge: challenge)
        let id = Base64.urlEncode(assertion.credentialId)
        let response: [String: Any] = [
            "id": id, "rawId": id, "type": "public-key", "authenticatorAttachment": "platform", "clientExtensionResults": [:] as [String: Any],
            "response": [
                "clientDataJSON": Base64.urlEncode(assertion.clientDataJSON),
                "authenticatorData": Base64.urlEncode(assertion.authenticatorData),
                "signature": Base64.urlEncode(assertion.signature),
                "userHandle": Base64.urlEncode(assertion.userHandle),
            ],
        ]
        return Array(try JSONSerialization.data(withJSONObject: response, options: [.sortedKeys]))
    }
}
