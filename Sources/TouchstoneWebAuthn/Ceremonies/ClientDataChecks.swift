import Crypto
import TouchstoneCrypto

/// The client data and authenticator data checks shared by both ceremonies.
extension RelyingParty {
    /// §7.1 steps 7–10 / §7.2 steps 10–13: type, challenge, origin, cross-origin and top origin.
    func checkClientData(_ clientData: CollectedClientData, type: String, challenge: [UInt8]) throws(WebAuthnError) {
        guard clientData.type == type else {
            throw WebAuthnError(.wrongType, "clientDataJSON type is '\(clientData.type)', expected '\(type)'")
        }
        // Constant time: the challenge is not secret, but there is no reason to leak where it differs.
        guard ConstantTime.equal(clientData.challenge, challenge) else {
            throw WebAuthnError(.challengeMismatch, "clientDataJSON challenge is not the one issued")
        }
        guard self.origins.contains(where: { Self.sameOrigin($0, clientData.origin) }) else {
            throw WebAuthnError(.originNotAllowed, "origin '\(clientData.origin)' is not allowed")
        }
        if clientData.crossOrigin && !self.allowCrossOrigin {
            throw WebAuthnError(.crossOriginNotAllowed, "cross-origin use is not allowed")
        }
        if let topOrigin = clientData.topOrigin {
            guard self.allowCrossOrigin else {
                throw WebAuthnError(.topOriginNotAllowed, "the ceremony ran embedded in '\(topOrigin)'")
            }
            guard self.allowedTopOrigins.isEmpty || self.allowedTopOrigins.contains(where: { Self.sameOrigin($0, topOrigin) })
            else {
                throw WebAuthnError(.topOriginNotAllowed, "top origin '\(topOrigin)' is not allowed")
            }
        }
    }

    /// Compares a configured origin with one from client data. A configured web origin may be written with a
    /// trailing slash (`https://example.org/`); scheme and host compare case-insensitively. Anything else (Android
    /// `android:apk-key-hash:` origins) compares exactly.
    static func sameOrigin(_ configured: String, _ received: String) -> Bool {
        func normalized(_ origin: String) -> String {
            guard origin.hasPrefix("https://") || origin.hasPrefix("http://") else { return origin }
            var value = origin.lowercased()
            if value.hasSuffix("/") { value.removeLast() }
            return value
        }
        // The usual case, an origin exactly as configured, without building two lowercased copies.
        if configured == received { return true }
        return normalized(configured) == normalized(received)
    }

    /// §7.1 steps 13–16 / §7.2 steps 15–18: RP ID hash, user presence, user verification, backup flags.
    func checkAuthenticatorData(_ authData: AuthenticatorData, userPresenceRequired: Bool = true) throws(WebAuthnError) {
        guard authData.rpIdHash == self.idHash else {
            throw WebAuthnError(.rpIdMismatch, "rpIdHash is not SHA-256 of '\(self.id)'")
        }
        if userPresenceRequired && !authData.flags.contains(.userPresent) {
            throw WebAuthnError(.userNotPresent, "the UP flag is not set")
        }
        if self.userVerification == .required && !authData.flags.contains(.userVerified) {
            throw WebAuthnError(.userNotVerified, "user verification is required and the UV flag is not set")
        }
        if !authData.flags.contains(.backupEligible) && authData.flags.contains(.backupState) {
            throw WebAuthnError(.invalidBackupFlags, "BS is set while BE is not")
        }
    }
}
