public import Foundation
import SQLKit
import TouchstoneCrypto

extension Date {
    /// The time as the store keeps it: whole milliseconds since 1970 (what a stored time compares as).
    public var millis: Int64 { Int64((self.timeIntervalSince1970 * 1000).rounded()) }
    public init(millis: Int64) { self.init(timeIntervalSince1970: Double(millis) / 1000) }
}

extension [UInt8] {
    var base64URL: String { Base64.urlEncode(self) }

    init?(base64URL text: String) {
        guard let bytes = Base64.urlDecodeCanonical(text) else { return nil }
        self = bytes
    }
}

extension SQLRow {
    func date(_ column: String) throws -> Date {
        Date(millis: try self.decode(column: column, as: Int64.self))
    }

    func optionalDate(_ column: String) throws -> Date? {
        try self.decode(column: column, as: Int64?.self).map(Date.init(millis:))
    }

    func enumValue<E: RawRepresentable>(_ column: String, as type: E.Type) throws -> E
    where E.RawValue == String {
        let raw = try self.decode(column: column, as: String.self)
        guard let value = E(rawValue: raw) else {
            throw StoreError.unavailable("unexpected value \(raw) in column \(column)")
        }
        return value
    }
}

extension UserRecord {
    init(row: any SQLRow) throws {
        self.init(
            id: try row.decode(column: "id", as: String.self),
            email: try row.decode(column: "email", as: String.self),
            displayName: try row.decode(column: "display_name", as: String?.self),
            passwordHash: try row.decode(column: "password_hash", as: String.self).nilIfEmpty,
            createdAt: try row.date("created_at")
        )
        self.requireDeviceBoundPasskeys = try row.decode(column: "require_device_bound_passkeys", as: Int64.self) != 0
        self.emailVerifiedAt = try row.decode(column: "email_verified_at", as: Int64?.self).map(Date.init(millis:))
    }
}

extension SessionRecord {
    /// The columns an insert names, in the order of ``insertValues`` (also every column ``init(row:)`` reads).
    static let insertColumns = """
        token_hash, user_id, created_at, expires_at, idle_expires_at, authenticated_at, strong_authenticated_at, \
        methods, registration_id, revoked_at, id, acr, client_address, user_agent, last_seen_at
        """

    var insertValues: [any Encodable & Sendable] {
        [
            self.tokenHash, self.userId, self.createdAt.millis, self.expiresAt.millis, self.idleExpiresAt.millis,
            self.authenticatedAt.millis, self.strongAuthenticatedAt?.millis, self.methods.map(\.rawValue).joined(separator: ","),
            self.registrationId, self.revokedAt?.millis, self.id, self.acr, self.clientAddress, self.userAgent,
            self.lastSeenAt?.millis,
        ]
    }

    init(row: any SQLRow) throws {
        let methods = try row.decode(column: "methods", as: String.self).split(separator: ",")
            .compactMap { AuthenticationMethod(rawValue: String($0)) }
        self.init(
            tokenHash: try row.decode(column: "token_hash", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at"),
            idleExpiresAt: try row.date("idle_expires_at"),
            authenticatedAt: try row.date("authenticated_at"),
            strongAuthenticatedAt: try row.optionalDate("strong_authenticated_at"),
            methods: methods,
            registrationId: try row.decode(column: "registration_id", as: String?.self),
            revokedAt: try row.optionalDate("revoked_at"),
            id: try row.decode(column: "id", as: String?.self),
            acr: try row.decode(column: "acr", as: String?.self),
            clientAddress: try row.decode(column: "client_address", as: String?.self),
            userAgent: try row.decode(column: "user_agent", as: String?.self),
            lastSeenAt: try row.optionalDate("last_seen_at")
        )
    }
}

extension AppAttestKeyRecord {
    init(row: any SQLRow) throws {
        guard let publicKey = [UInt8](base64URL: try row.decode(column: "public_key", as: String.self)),
            let receipt = [UInt8](base64URL: try row.decode(column: "receipt", as: String.self))
        else {
            throw StoreError.unavailable("stored App Attest key is not base64url")
        }
        self.init(
            keyId: try row.decode(column: "key_id", as: String.self),
            publicKey: publicKey,
            appId: try row.decode(column: "app_id", as: String.self),
            environment: try row.decode(column: "environment", as: String.self),
            counter: try row.decode(column: "counter", as: Int64.self),
            receipt: receipt,
            createdAt: try row.date("created_at"),
            lastUsedAt: try row.optionalDate("last_used_at")
        )
    }
}

extension RegistrationRecord {
    init(row: any SQLRow) throws {
        let encodedKey = try row.decode(column: "public_key", as: String.self)
        guard let publicKey = [UInt8](base64URL: encodedKey) else {
            throw StoreError.unavailable("stored public key is not base64url")
        }
        self.init(
            id: try row.decode(column: "id", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            deviceId: try row.decode(column: "device_id", as: String.self),
            deviceName: try row.decode(column: "device_name", as: String?.self),
            algorithm: try row.decode(column: "algorithm", as: String.self),
            publicKey: publicKey,
            keyFingerprint: try row.decode(column: "key_fingerprint", as: String.self),
            status: try row.enumValue("status", as: RegistrationStatus.self),
            createdAt: try row.date("created_at"),
            lastUsedAt: try row.optionalDate("last_used_at"),
            statusChangedAt: try row.optionalDate("status_changed_at"),
            appAttestKeyId: try row.decode(column: "app_attest_key_id", as: String?.self)
        )
        self.failedAttempts = try row.decode(column: "failed_attempts", as: Int64.self)
        self.pinSetAt = try row.optionalDate("pin_set_at")
        self.pinDisabledAt = try row.optionalDate("pin_disabled_at")
        self.proofKeyThumbprint = try row.decode(column: "proof_jkt", as: String?.self)
        if let level = try row.decode(column: "key_attestation_level", as: String?.self),
            let package = try row.decode(column: "key_attestation_package", as: String?.self)
        {
            self.keyAttestation = KeyAttestationRecord(securityLevel: level, packageName: package)
        }
    }
}

extension PasskeyRecord {
    init(row: any SQLRow) throws {
        guard let publicKey = [UInt8](base64URL: try row.decode(column: "public_key", as: String.self)) else {
            throw StoreError.unavailable("stored passkey public key is not base64url")
        }
        self.init(
            id: try row.decode(column: "id", as: String.self),
            credentialId: try row.decode(column: "credential_id", as: String.self),
            userId: try row.decode(column: "user_id", as: String.self),
            name: try row.decode(column: "name", as: String?.self),
            publicKey: publicKey,
            algorithm: Int(try row.decode(column: "algorithm", as: Int64.self)),
            signCount: try row.decode(column: "sign_count", as: Int64.self),
            aaguid: try row.decode(column: "aaguid", as: String.self),
            backupEligible: try row.decode(column: "backup_eligible", as: Int64.self) != 0,
            backedUp: try row.decode(column: "backed_up", as: Int64.self) != 0,
            attestationFormat: try row.decode(column: "attestation_format", as: String.self),
            attestationType: try row.decode(column: "attestation_type", as: String.self),
            cloneWarnings: try row.decode(column: "clone_warnings", as: Int64.self),
            createdAt: try row.date("created_at"),
            lastUsedAt: try row.optionalDate("last_used_at")
        )
        self.failedAttempts = try row.decode(column: "failed_attempts", as: Int64.self)
        self.lockedAt = try row.optionalDate("locked_at")
        self.createdVia = try row.decode(column: "created_via", as: String.self)
        self.attestationKeyId = try row.decode(column: "attestation_key_id", as: String?.self)
    }
}

extension WebAuthnChallengeRecord {
    init(row: any SQLRow) throws {
        let allowed = try row.decode(column: "allow_credentials", as: String.self)
        self.init(
            challenge: try row.decode(column: "challenge", as: String.self),
            purpose: try row.enumValue("purpose", as: ChallengePurpose.self),
            userId: try row.decode(column: "user_id", as: String?.self),
            allowCredentials: allowed.isEmpty ? [] : allowed.split(separator: ",").map(String.init),
            createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at")
        )
    }
}

extension ChallengeRecord {
    init(row: any SQLRow) throws {
        self.init(
            challenge: try row.decode(column: "challenge", as: String.self),
            registrationId: try row.decode(column: "registration_id", as: String.self),
            purpose: try row.enumValue("purpose", as: ChallengePurpose.self),
            createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at")
        )
    }
}

extension String {
    /// `nil` for the empty string (a user without a password: ``UserRecord/passwordHash``).
    var nilIfEmpty: String? { self.isEmpty ? nil : self }
}
