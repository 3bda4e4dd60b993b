import Crypto
import Foundation
import JWTKit
import Logging
import NIOConcurrencyHelpers
import TouchstoneAuth
import TouchstoneCrypto
import TouchstoneStore
import TouchstoneWebhooks

/// The token-signing key set: read from the store (shared by every instance) and cached briefly, made and rotated as
/// ``SigningKeySchedule`` says, published as a JWKS, and used to sign JWTs. Private keys are opened with the
/// key-encryption key only when a key first signs in this process.
final class SigningKeyRing: Sendable {
    let store: any SigningKeyStore
    let schedule: SigningKeySchedule
    let algorithm: TokenSigningAlgorithm
    let publicationLead: TimeInterval
    private let keyEncryptionKey: SymmetricKey
    let now: @Sendable () -> Date
    let audit: AuditLog
    let logger: Logger

    /// How long a loaded key set is used before it is read again (another instance may have added a key; the
    /// publication lead is far longer than this, so every instance knows a key before it signs).
    static let cacheLifetime: TimeInterval = 10

    private struct Loaded {
        var keys: [SigningKeyRecord]
        var at: Date
    }

    private let loaded = NIOLockedValueBox<Loaded?>(nil)
    private let signers = NIOLockedValueBox<[String: JWTKeyCollection]>([:])
    private let verifiers = NIOLockedValueBox<[String: VerificationKey]>([:])

    init(
        store: any SigningKeyStore,
        settings: TokenSettings,
        keyEncryptionKey: SymmetricKey,
        now: @escaping @Sendable () -> Date,
        audit: AuditLog,
        logger: Logger
    ) {
        self.store = store
        self.schedule = SigningKeySchedule(settings: settings)
        self.algorithm = settings.algorithm
        self.publicationLead = settings.publicationLead.timeInterval
        self.keyEncryptionKey = keyEncryptionKey
        self.now = now
        self.audit = audit
        self.logger = logger
    }

    // MARK: The key set

    /// The stored keys, from the cache while it is fresh.
    func keys(fresh: Bool = false) async throws -> [SigningKeyRecord] {
        let now = self.now()
        if !fresh, let loaded = self.loaded.withLockedValue({ $0 }), now >= loaded.at,
            now.timeIntervalSince(loaded.at) < Self.cacheLifetime
        {
            return loaded.keys
        }
        let keys = try await self.store.signingKeys()
        self.loaded.withLockedValue { $0 = Loaded(keys: keys, at: now) }
        return keys
    }

    /// The key that signs now, made first if there is none.
    func signingKey() async throws -> SigningKeyRecord {
        if let active = self.schedule.active(try await self.keys(), at: self.now()) { return active }
        // None known: the first start, or another instance made the first key since the cache was filled.
        try await self.maintain()
        guard let active = self.schedule.active(try await self.keys(), at: self.now()) else {
            throw StoreError.unavailable("no signing key could be made")
        }
        return active
    }

    /// The keys published now (pending, active, and retired ones whose tokens may still be live).
    func published() async throws -> [SigningKeyRecord] {
        self.schedule.published(try await self.keys(), at: self.now())
    }

    /// The published keys as a JWKS document.
    func jwks() async throws -> PublicJWKSet {
        PublicJWKSet(keys: try await self.published().compactMap(Self.publicJWK))
    }

    /// The published keys, for verifying tokens this issuer signed (introspection).
    func verificationKeys() async throws -> StaticKeySet {
        var keys: [VerificationKey] = []
        for record in try await self.published() {
            if let cached = self.verifiers.withLockedValue({ $0[record.kid] }) {
                keys.append(cached)
            } else if let jwk = Self.publicJWK(record), let key = try? await VerificationKey(jwk: jwk) {
                self.verifiers.withLockedValue { $0[record.kid] = key }
                keys.append(key)
            }
        }
        return StaticKeySet(keys)
    }

    static func publicJWK(_ record: SigningKeyRecord) -> PublicJWK? {
        try? JSONDecoder().decode(PublicJWK.self, from: Data(record.publicJWK.utf8))
    }

    // MARK: Making keys

    /// Makes the key the schedule says is due, if any (at start, and every minute from the rotation service).
    func maintain() async throws {
        let keys = try await self.keys(fresh: true)
        guard let activatesAt = self.schedule.due(keys, at: self.now()) else { return }
        _ = try await self.add(activatesAt: activatesAt, after: keys, type: .signingKeyCreated, reason: keys.isEmpty ? "first key" : "scheduled rotation")
    }

    /// Makes a new key on demand: it signs after the publication lead time, or at once when `immediately` (for a key
    /// that must stop signing now; caches that have not seen the new key refuse its tokens until they refresh).
    func rotate(immediately: Bool, actor: String) async throws -> SigningKeyRecord {
        for _ in 0..<3 {
            let keys = try await self.keys(fresh: true)
            let now = self.now()
            let activatesAt = immediately ? now : now.addingTimeInterval(self.publicationLead)
            if let made = try await self.add(activatesAt: activatesAt, after: keys, type: .signingKeyRotated, reason: "by \(actor)") {
                return made
            }
        }
        throw StoreError.conflict
    }

    /// Stores a new key of the next generation; `nil` when another instance stored that generation first.
    private func add(activatesAt: Date, after keys: [SigningKeyRecord], type: AuditEventType, reason: String) async throws
        -> SigningKeyRecord?
    {
        let generation = (keys.map(\.generation).max() ?? 0) + 1
        // The store keeps milliseconds: a time rounded up would put the activation after `now` and leave no key active.
        let activatesAt = Date(timeIntervalSince1970: (activatesAt.timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        let record = try self.makeKey(generation: generation, activatesAt: activatesAt)
        // The key and its event (with its `signing_key.rotated` webhook) commit together.
        let event = self.audit.event(
            type,
            .info,
            reason: "kid \(record.kid) generation \(generation) \(record.algorithm) signs from \(activatesAt.rfc3339); \(reason)",
            webhookData: ["kid": .string(record.kid), "activatesAt": .string(WebhookEvent.rfc3339(activatesAt))]
        )
        guard try await self.audit.commit(event, when: { tx in try await tx.insertSigningKey(record) }) else {
            _ = try await self.keys(fresh: true)
            return nil
        }
        _ = try await self.keys(fresh: true)
        self.logger.notice("token signing key \(record.kid) (\(record.algorithm), generation \(generation)) signs from \(activatesAt.rfc3339)")
        return record
    }

    private func makeKey(generation: Int64, activatesAt: Date) throws -> SigningKeyRecord {
        let privateKey: [UInt8]
        var jwk: PublicJWK
        switch self.algorithm {
        case .es256:
            let key = P256.Signing.PrivateKey()
            privateKey = Array(key.rawRepresentation)
            let point = Array(key.publicKey.x963Representation)
            jwk = PublicJWK(kty: "EC", crv: "P-256", x: Base64.urlEncode(point[1..<33]), y: Base64.urlEncode(point[33..<65]), kid: nil, alg: "ES256")
        case .eddsa:
            let key = Curve25519.Signing.PrivateKey()
            privateKey = Array(key.rawRepresentation)
            jwk = PublicJWK(kty: "OKP", crv: "Ed25519", x: Base64.urlEncode(key.publicKey.rawRepresentation), kid: nil, alg: "EdDSA")
        }
        let kid = Self.thumbprint(jwk)
        jwk.kid = kid
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return SigningKeyRecord(
            kid: kid,
            generation: generation,
            algorithm: self.algorithm.rawValue,
            publicJWK: String(decoding: try encoder.encode(jwk), as: UTF8.self),
            sealedPrivateKey: try KeySealing.seal(privateKey, key: self.keyEncryptionKey, context: Array(kid.utf8)),
            createdAt: self.now(),
            activatesAt: activatesAt
        )
    }

    /// The JWK thumbprint (RFC 7638): SHA-256 over the required members in lexicographic order, base64url.
    static func thumbprint(_ jwk: PublicJWK) -> String {
        let members: String
        if jwk.kty == "EC" {
            members = #"{"crv":"\#(jwk.crv ?? "")","kty":"EC","x":"\#(jwk.x ?? "")","y":"\#(jwk.y ?? "")"}"#
        } else {
            members = #"{"crv":"\#(jwk.crv ?? "")","kty":"\#(jwk.kty)","x":"\#(jwk.x ?? "")"}"#
        }
        return Base64.urlEncode(Array(SHA256.hash(data: Array(members.utf8))))
    }

    // MARK: Signing

    /// Signs `payload` with the key that signs now; the header has its `kid`, `alg` and `typ: type`.
    func sign(_ payload: some JWTPayload, type: String) async throws -> (token: String, kid: String) {
        let key = try await self.signingKey()
        let collection = try await self.signer(for: key)
        var header = JWTHeader()
        header.typ = type
        header.alg = key.algorithm
        return (try await collection.sign(payload, kid: JWKIdentifier(string: key.kid), header: header), key.kid)
    }

    private func signer(for key: SigningKeyRecord) async throws -> JWTKeyCollection {
        if let cached = self.signers.withLockedValue({ $0[key.kid] }) { return cached }
        let raw = try self.open(key)
        let collection = JWTKeyCollection()
        switch TokenSigningAlgorithm(rawValue: key.algorithm) {
        case .es256:
            await collection.add(ecdsa: try ES256PrivateKey(backing: P256.Signing.PrivateKey(rawRepresentation: raw)), kid: JWKIdentifier(string: key.kid))
        case .eddsa:
            await collection.add(
                eddsa: EdDSA.PrivateKey(backing: try Curve25519.Signing.PrivateKey(rawRepresentation: raw)),
                kid: JWKIdentifier(string: key.kid)
            )
        case nil:
            throw KeyEncryptionKeyError("signing key \(key.kid) has an unknown algorithm \(key.algorithm)")
        }
        self.signers.withLockedValue { $0[key.kid] = collection }
        return collection
    }

    private func open(_ key: SigningKeyRecord) throws -> [UInt8] {
        do {
            return try KeySealing.open(key.sealedPrivateKey, key: self.keyEncryptionKey, context: Array(key.kid.utf8))
        } catch {
            throw KeyEncryptionKeyError(
                "the key-encryption key does not open the stored token-signing key \(key.kid) (generation \(key.generation)): "
                    + "this is not the key the signing keys were sealed with. Give every instance the same "
                    + "TOUCHSTONE_KEY_ENCRYPTION_KEY (or, for SQLite, keep the .kek file beside the database)."
            )
        }
    }

    /// Throws ``KeyEncryptionKeyError`` unless every stored key opens with the key-encryption key (checked at start, so
    /// a server with the wrong key refuses to start instead of failing at its first token).
    func checkKeysOpen() async throws {
        for key in try await self.keys(fresh: true) {
            _ = try self.open(key)
        }
    }
}
