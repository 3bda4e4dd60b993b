import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import TouchstoneDPoP
import TouchstoneStore

/// The server's side of DPoP (RFC 9449) for every route that takes a proof: the token endpoints (which bind what they
/// issue to the proof's key) and the routes that take a bound token (which check the proof is from that key). It
/// reads the `DPoP` header, verifies the proof against this request (``DPoPVerifier``), demands one of this server's
/// nonces when `TOUCHSTONE_DPOP_NONCE=on`, and refuses a `jti` seen before on any instance (``ReplayRecord``).
struct DPoPGate: Sendable {
    let verifier: DPoPVerifier
    let nonces: DPoPNonces
    let requireNonce: Bool
    /// Where the `jti` of the proofs ``proof(of:accessToken:)`` accepts are kept. A grant's proof is recorded on the
    /// database whatever this is, in the grant's own transaction (``UnrecordedProof/record(in:)``).
    let replay: ReplayRecord
    /// The database's record of proofs.
    let store: any DPoPStore
    /// The public origin `htu` is compared with (`TOUCHSTONE_ISSUER`'s scheme, host and port); nil: the request's
    /// own `Host` over http (a server reached directly), or without one the default issuer's.
    let origin: String?
    let defaultOrigin: String
    let now: @Sendable () -> Date

    static let noncePurpose = "touchstone dpop nonce v1"

    init(
        settings: DPoPSettings, issuer: String?, defaultIssuer: String, keyEncryptionKey: SymmetricKey, store: any DPoPStore,
        replay: ReplayRecord, metrics: ServerMetrics? = nil, now: @escaping @Sendable () -> Date
    ) {
        var verifier = DPoPVerifier(
            maximumAge: TimeInterval(settings.proofMaximumAge.components.seconds),
            allowedSkew: TimeInterval(settings.allowedClockSkew.components.seconds)
        )
        if let metrics { verifier.signatureCheck = { metrics.checkDPoPSignature($0) } }
        self.verifier = verifier
        self.nonces = DPoPNonces(
            key: HKDF<SHA256>.deriveKey(inputKeyMaterial: keyEncryptionKey, info: Array(Self.noncePurpose.utf8), outputByteCount: 32),
            allowedSkew: TimeInterval(settings.allowedClockSkew.components.seconds)
        )
        self.requireNonce = settings.requireNonce
        self.replay = replay
        self.store = store
        self.origin = issuer.flatMap(Self.origin(of:))
        self.defaultOrigin = Self.origin(of: defaultIssuer) ?? defaultIssuer
        self.now = now
    }

    /// `scheme://host[:port]` of a URL.
    static func origin(of url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host else { return nil }
        return "\(scheme)://\(host)\(components.port.map { ":\($0)" } ?? "")"
    }

    /// `DPoP-Nonce` for an answer: this process's nonce while a restart's fence stands, else the current nonce when
    /// nonces are demanded.
    var nonceHeader: String? {
        let now = self.now()
        if let fence = self.replay.fence, fence.isActive(at: now) { return fence.nonce }
        return self.requireNonce ? self.nonces.current(at: now) : nil
    }

    /// Whether `nonce` is one this server issued and still accepts.
    func acceptsNonce(_ nonce: String, at now: Date) -> Bool {
        self.nonces.isAcceptable(nonce, at: now) || self.replay.fence?.accepts(nonce, at: now) == true
    }

    /// The algorithms accepted, for `WWW-Authenticate: DPoP algs="…"` and the discovery document.
    static let algorithms = DPoPVerifier.supportedAlgorithms.sorted()

    /// The verified proof of `request`, its `jti` recorded; nil when the request has no `DPoP` header.
    ///
    /// - Parameter accessToken: the token sent with the proof (`ath` must be its hash); nil at a token endpoint.
    /// - Throws: ``DPoPError`` for a malformed, mismatched, stale, replayed or nonce-less proof, or two `DPoP` headers.
    func proof(of request: Request, accessToken: String?) async throws -> VerifiedDPoPProof? {
        guard let pending = try self.unrecordedProof(of: request, accessToken: accessToken) else { return nil }
        switch self.replay {
        case .database:
            try await pending.record(in: self.store)
        case .memory(let memory):
            let now = self.now()
            if let fence = memory.fence, fence.demandsNonce(issuedAt: pending.proof.issuedAt, nonce: pending.proof.nonce, at: now) {
                throw DPoPError(
                    .nonceRequired, "the server restarted: a proof that could have been made before then needs its new DPoP-Nonce")
            }
            // The next process's fence must cover this proof even if the clock is set back before it starts: a proof
            // past the recorded mark waits for a new one, and is refused (503) when it cannot be written.
            do {
                try await memory.issueMark.cover(pending.proof.issuedAt)
            } catch {
                throw StoreError.unavailable
            }
            guard memory.cache.record(jti: pending.proof.jti, thumbprint: pending.proof.thumbprint, until: pending.until, at: now) else {
                throw DPoPError(.replayed, "this proof's jti was used before")
            }
        }
        return pending.proof
    }

    /// The verified proof of `request` whose `jti` is still to be recorded (``UnrecordedProof/record(in:)``), in the
    /// transaction of what the proof is for: a grant records it with its own writes, one commit for both, and a
    /// replay rolls the grant back. Nil when the request has no `DPoP` header.
    func unrecordedProof(of request: Request, accessToken: String?) throws -> UnrecordedProof? {
        let values = request.headers[values: Self.header]
        guard let proof = values.first else { return nil }
        guard values.count == 1 else { throw DPoPError(.malformed, "a request carries at most one DPoP header") }
        let now = self.now()
        let verified = try self.verifier.verify(
            proof,
            method: request.method.rawValue,
            url: self.url(of: request),
            accessToken: accessToken,
            nonce: self.requireNonce ? { self.acceptsNonce($0, at: now) } : nil,
            at: now
        )
        // Kept until the proof would be refused as stale anyway (its iat may be a little ahead of this clock).
        return UnrecordedProof(proof: verified, until: max(verified.issuedAt, now).addingTimeInterval(self.verifier.maximumAge + 1))
    }

    /// A proof that passed every check but the replay check, which ``record(in:)`` makes.
    struct UnrecordedProof: Sendable {
        let proof: VerifiedDPoPProof
        /// How long its `jti` is kept.
        let until: Date

        var thumbprint: String { self.proof.thumbprint }

        /// Records the `jti` in `store` (a unit of work's, or the store itself): one statement that checks and records,
        /// so two instances cannot both accept it.
        ///
        /// - Throws: ``DPoPError`` `replayed` when the `jti` was recorded before.
        func record(in store: any DPoPStore) async throws {
            guard try await store.recordDPoPProof(thumbprint: self.proof.thumbprint, jti: self.proof.jti, expiresAt: self.until) else {
                throw DPoPError(.replayed, "this proof's jti was used before")
            }
        }
    }

    /// The URL `htu` must name: the public origin and the request's path (its query is no part of it).
    func url(of request: Request) -> String {
        let origin = self.origin ?? request.head.authority.map { "http://\($0)" } ?? self.defaultOrigin
        return origin + request.uri.path
    }

    static let header = HTTPField.Name("DPoP")!
    static let nonceHeaderName = HTTPField.Name("DPoP-Nonce")!
}

extension APIError {
    /// A refused proof on a `/v1` route: `invalid_dpop_proof` or `use_dpop_nonce` (with `DPoP-Nonce`), 400 where the
    /// proof asks for a token and 401 (with `WWW-Authenticate: DPoP`) where it comes with a bound token.
    static func dpop(_ error: DPoPError, status: HTTPResponse.Status, nonce: String?) -> APIError {
        var api = APIError(status, code: error.oauthError, message: error.reason)
        if let nonce { api.headers[DPoPGate.nonceHeaderName] = nonce }
        if status == .unauthorized {
            api.headers[.wwwAuthenticate] = DPoPGate.challenge(scheme: .dpop, error: error.oauthError, description: error.reason)
        }
        return api
    }
}
