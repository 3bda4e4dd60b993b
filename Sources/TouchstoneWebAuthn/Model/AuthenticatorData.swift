/// Authenticator data (WebAuthn Level 3 §6.1): what the authenticator signs besides the client data hash.
///
/// https://www.w3.org/TR/webauthn-3/#sctn-authenticator-data
public struct AuthenticatorData: Sendable, Hashable {
    /// The flags byte.
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// User present.
        public static let userPresent = Flags(rawValue: 1 << 0)
        /// User verified.
        public static let userVerified = Flags(rawValue: 1 << 2)
        /// Backup eligible: the credential may be synced (a passkey).
        public static let backupEligible = Flags(rawValue: 1 << 3)
        /// Backed up: the credential is currently synced.
        public static let backupState = Flags(rawValue: 1 << 4)
        /// Attested credential data included.
        public static let attestedCredentialData = Flags(rawValue: 1 << 6)
        /// Extension data included.
        public static let extensionData = Flags(rawValue: 1 << 7)
    }

    /// The credential created during registration.
    public struct AttestedCredentialData: Sendable, Hashable {
        public var aaguid: [UInt8]
        public var credentialId: [UInt8]
        /// The credential public key, as the authenticator encoded it (COSE_Key CBOR).
        public var publicKeyBytes: [UInt8]
        public var publicKey: COSEKey
    }

    /// The raw bytes, as signed.
    public let rawValue: [UInt8]
    public let rpIdHash: [UInt8]
    public let flags: Flags
    public let signCount: UInt32
    public let attestedCredentialData: AttestedCredentialData?
    public let extensions: CBOR?

    /// The longest credential id accepted (§7.1 step 25).
    public static let maxCredentialIdLength = 1023

    /// Parses authenticator data, checking every length against the bytes present.
    public init(bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count >= 37 else { throw .malformed("authenticator data is shorter than 37 bytes") }
        self.rawValue = bytes
        self.rpIdHash = Array(bytes[0..<32])
        self.flags = Flags(rawValue: bytes[32])
        self.signCount = bytes[33..<37].reduce(0) { ($0 << 8) | UInt32($1) }
        var offset = 37
        let decoder = CBORDecoder()
        if self.flags.contains(.attestedCredentialData) {
            guard bytes.count - offset >= 18 else { throw .malformed("attested credential data is truncated") }
            let aaguid = Array(bytes[offset..<(offset + 16)])
            let idLength = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard idLength <= Self.maxCredentialIdLength else {
                throw .malformed("credential id is longer than \(Self.maxCredentialIdLength) bytes")
            }
            guard bytes.count - offset >= idLength else { throw .malformed("credential id is truncated") }
            let credentialId = Array(bytes[offset..<(offset + idLength)])
            offset += idLength
            let keyItem: CBOR
            let consumed: Int
            do {
                (keyItem, consumed) = try decoder.decodePrefix(bytes[offset...])
            } catch {
                throw .malformed("credential public key is not CBOR: \(error.reason)")
            }
            let keyBytes = Array(bytes[offset..<(offset + consumed)])
            offset += consumed
            self.attestedCredentialData = AttestedCredentialData(
                aaguid: aaguid,
                credentialId: credentialId,
                publicKeyBytes: keyBytes,
                publicKey: try COSEKey(keyItem)
            )
        } else {
            self.attestedCredentialData = nil
        }
        if self.flags.contains(.extensionData) {
            do {
                let (item, consumed) = try decoder.decodePrefix(bytes[offset...])
                guard item.mapValue != nil else { throw WebAuthnError.malformed("extensions are not a CBOR map") }
                self.extensions = item
                offset += consumed
            } catch let error as WebAuthnError {
                throw error
            } catch {
                throw .malformed("extensions are not CBOR")
            }
        } else {
            self.extensions = nil
        }
        guard offset == bytes.count else { throw .malformed("authenticator data has trailing bytes") }
    }
}
