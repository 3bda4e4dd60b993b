import Crypto
public import TouchstoneCrypto

/// An assertion that passed verification.
public struct VerifiedAuthentication: Sendable, Hashable {
    public var credentialId: [UInt8]
    /// The counter to store for the credential.
    public var newSignCount: UInt32
    public var userVerified: Bool
    /// The BE flag of this assertion (the one to store).
    public var backupEligible: Bool
    public var backupState: Bool
    /// BE differs from the stored credential's flag (``StoredCredential/backupEligible``): the authenticator now says
    /// the credential can (or cannot) be backed up. Not an error; the relying party records it and applies its policy.
    public var backupEligibilityChanged: Bool
    /// The counter did not increase although one of the two values is non-zero: the authenticator may be cloned.
    public var cloneWarning: Bool
}

/// What the relying party knows about the credential being used.
public struct StoredCredential: Sendable, Hashable {
    public var id: [UInt8]
    /// COSE_Key CBOR, as stored at registration.
    public var publicKey: [UInt8]
    public var signCount: UInt32
    /// The BE flag stored for the credential (seen at registration, or at its last use).
    public var backupEligible: Bool
    /// The user handle of the account owning the credential.
    public var userHandle: [UInt8]

    public init(id: [UInt8], publicKey: [UInt8], signCount: UInt32, backupEligible: Bool, userHandle: [UInt8]) {
        self.id = id
        self.publicKey = publicKey
        self.signCount = signCount
        self.backupEligible = backupEligible
        self.userHandle = userHandle
    }
}

extension RelyingParty {
    /// Verifies an assertion, following WebAuthn Level 3 §7.2 in order.
    ///
    /// https://www.w3.org/TR/webauthn-3/#sctn-verifying-assertion
    ///
    /// - Parameters:
    ///   - credentialId: `rawId` of the response.
    ///   - clientDataJSON, authenticatorData, signature: the response's fields, decoded from base64url.
    ///   - userHandle: `response.userHandle`, if the authenticator returned one.
    ///   - challenge: The challenge issued for this ceremony.
    ///   - allowCredentials: The credential ids offered in the request (empty for a discoverable login).
    ///   - credential: The stored credential with this id.
    ///   - keys: Parsed public keys by their stored COSE bytes, shared between calls (parsing a key costs about as
    ///     much as the signature check).
    public func verifyAuthentication(
        credentialId: [UInt8],
        clientDataJSON: [UInt8],
        authenticatorData: [UInt8],
        signature: [UInt8],
        userHandle: [UInt8]?,
        challenge: [UInt8],
        allowCredentials: [[UInt8]] = [],
        credential: StoredCredential,
        keys: ParsedValueCache<BytesKey, COSEKey>? = nil
    ) throws(WebAuthnError) -> VerifiedAuthentication {
        // Step 5: the credential is one of those offered, when a list was sent.
        guard allowCredentials.isEmpty || allowCredentials.contains(credentialId) else {
            throw WebAuthnError(.credentialNotAllowed, "the credential was not among allowCredentials")
        }
        guard credentialId == credential.id else {
            throw WebAuthnError(.credentialNotAllowed, "the response's credential id is not the stored credential's")
        }
        // Step 6: the user handle, when present, names the credential's owner (required for discoverable logins).
        if let userHandle {
            guard userHandle == credential.userHandle else {
                throw WebAuthnError(.userHandleMismatch, "userHandle does not belong to the credential's owner")
            }
        } else if allowCredentials.isEmpty {
            throw WebAuthnError(.userHandleMismatch, "a discoverable login must return the userHandle")
        }
        // Step 7: the stored public key.
        let publicKey: COSEKey
        if let keys {
            publicKey = try keys.value(for: BytesKey(credential.publicKey)) { () throws(WebAuthnError) in try COSEKey(bytes: credential.publicKey) }
        } else {
            publicKey = try COSEKey(bytes: credential.publicKey)
        }
        // Steps 8–13: parse client data; type, challenge, origin, cross-origin, top origin.
        let clientData = try CollectedClientData(bytes: clientDataJSON)
        try self.checkClientData(clientData, type: "webauthn.get", challenge: challenge)
        // Steps 14–17: RP ID hash, UP, UV, and BE/BS consistency.
        let authData = try AuthenticatorData(bytes: authenticatorData)
        try self.checkAuthenticatorData(authData)
        // Step 18: BE compared with the stored flag. A change is reported (``VerifiedAuthentication/
        // backupEligibilityChanged``), never refused here: real authenticators change it (iCloud Keychain passkeys made
        // before the first sync report BE=0, later BE=1; KeePassXC 2.7.12 changed it for existing passkeys; early
        // Apple builds went the other way), and a relying party that refused locked those users out. What a change
        // means is the relying party's policy (Touchstone: an account that requires device-bound passkeys refuses a
        // credential reporting BE=1). BS without BE stays an error (steps 14–17 above).
        let backupEligible = authData.flags.contains(.backupEligible)
        // Steps 20–21: the signature over authenticatorData ‖ SHA-256(clientDataJSON).
        let signedData = authenticatorData + Array(SHA256.hash(data: clientDataJSON))
        guard publicKey.isValidSignature(signature, for: signedData) else {
            throw WebAuthnError(.invalidSignature, "the assertion signature does not verify")
        }
        // Step 22: the signature counter.
        let cloneWarning =
            (authData.signCount != 0 || credential.signCount != 0) && authData.signCount <= credential.signCount
        if cloneWarning && self.rejectCounterRegression {
            throw WebAuthnError(.signCountNotIncreased, "sign count \(authData.signCount) did not increase past \(credential.signCount)")
        }
        return VerifiedAuthentication(
            credentialId: credentialId,
            newSignCount: max(authData.signCount, credential.signCount),
            userVerified: authData.flags.contains(.userVerified),
            backupEligible: backupEligible,
            backupState: authData.flags.contains(.backupState),
            backupEligibilityChanged: backupEligible != credential.backupEligible,
            cloneWarning: cloneWarning
        )
    }
}
