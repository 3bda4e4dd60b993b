public import Foundation
public import TouchstoneCrypto

/// DPoP (RFC 9449; issue #43): sessions bound to the phone's proof key are sent as `Authorization: DPoP <token>` with a
/// fresh proof on every request; a `use_dpop_nonce` answer is retried once with the server's nonce, which is kept.
extension TouchstoneClient {
    /// Sends `token`'s requests with proofs from `signer` from now on (``BiometricLogin`` does this for the sessions of
    /// its sign-ins).
    public func bind(sessionToken token: String, to signer: DPoPProofSigner) async {
        await self.dpop.bind(token: token, to: signer)
    }

    /// Whether `session`'s requests carry DPoP proofs.
    public func isBound(_ session: TouchstoneSession) async -> Bool {
        await self.dpop.signer(for: session.session.token) != nil
    }

    /// The headers for a request of your own API with an access token of `session` (``accessToken(for:minimumLifetime:)``):
    /// `Authorization: DPoP <token>` and a `DPoP` proof for `method` and `url` when the session is bound (its access
    /// tokens are bound too), `Authorization: Bearer <token>` otherwise.
    public func authorizationHeaders(for session: TouchstoneSession, accessToken: String, method: String, url: URL) async throws
        -> [String: String]
    {
        guard let signer = await self.dpop.signer(for: session.session.token) else { return ["Authorization": "Bearer \(accessToken)"] }
        let proof = try await signer.proof(method: method, url: url.absoluteString, accessToken: accessToken, nonce: nil, issuedAt: self.accessTokens.now())
        return ["Authorization": "DPoP \(accessToken)", "DPoP": proof]
    }

    /// A request of a bound session: a proof with `ath`; once more with the server's nonce after `use_dpop_nonce`, and
    /// once more with the server's time after a proof refused as too old or too new (this device's clock is off).
    func exchangeBound(_ method: String, _ path: String, token: String, signer: DPoPProofSigner, raw data: Data?) async throws
        -> TransportResponse
    {
        let url = try self.dpopURL(path)
        var (nonceRetried, clockRetried) = (false, false)
        while true {
            let issuedAt = self.accessTokens.now().addingTimeInterval(await self.dpop.clockOffset)
            let proof = try await signer.proof(method: method, url: url, accessToken: token, nonce: await self.dpop.nonce, issuedAt: issuedAt)
            do {
                return try await self.exchange(method, path, authorization: "DPoP \(token)", extra: ["DPoP": proof], raw: data)
            } catch let error as BiometricLoginError where error.serverCode == "use_dpop_nonce" && !nonceRetried {
                nonceRetried = true  // the answer's DPoP-Nonce is kept: the next proof carries it
            } catch let error as BiometricLoginError where error.serverCode == "invalid_dpop_proof" && !clockRetried
                && Self.isClockRefusal(error.message)
            {
                clockRetried = true
                guard let serverDate = error.serverDate else { throw error }
                await self.dpop.adjustClock(serverDate: serverDate, localDate: self.accessTokens.now())
            }
        }
    }

    /// The server's reasons for a proof whose `iat` is outside its window (docs/api.md).
    static func isClockRefusal(_ message: String) -> Bool {
        message.contains("older than") || message.contains("ahead of the server's clock")
    }

    /// An HTTP-date (RFC 9110 §5.6.7: `Sun, 06 Nov 1994 08:49:37 GMT`).
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }

    /// `htu`: the server's URL (as the transport knows it: the public origin) and the path, without the query.
    func dpopURL(_ path: String) throws -> String {
        guard let base = self.transport.serverURL?.absoluteString else {
            throw BiometricLoginError(.internalFailure, "DPoP proofs need the server's URL: give the transport one")
        }
        return (base.hasSuffix("/") ? String(base.dropLast()) : base) + DPoPProofSigner.withoutQuery(path)
    }

    /// `POST /v1/biometrics/registrations/{id}/proof-key`: a proof key for a registration enrolled without one;
    /// `signature` (the device key's) and `proofKeySignature` are both over `<challenge>.<thumbprint>`.
    public func addProofKey(
        token: String, registrationId: String, challenge: String, signature: [UInt8], proofKey: ProofKeyPublicKey, proofKeySignature: [UInt8]
    ) async throws -> BiometricRegistration {
        struct Input: Encodable {
            var challenge: String
            var signature: String
            var proofKey: [String: String]
            var proofKeySignature: String
        }
        struct Body: Decodable { var registration: BiometricRegistration }
        let path = "/v1/biometrics/registrations/\(Self.pathComponent(registrationId))/proof-key"
        let input = Input(
            challenge: challenge, signature: Base64.urlEncode(signature), proofKey: proofKey.jwk, proofKeySignature: Base64.urlEncode(proofKeySignature))
        let response = try await self.exchange("POST", path, token: token, raw: try JSONEncoder().encode(input))
        return try self.decode(Body.self, response, path: path).registration
    }
}

/// The proof key's part of an enrolment or a device-key sign-up: its public key and its signature.
public struct ProofKeyEnrolment: Sendable, Hashable {
    public var publicKey: ProofKeyPublicKey
    public var signature: [UInt8]

    public init(publicKey: ProofKeyPublicKey, signature: [UInt8]) {
        self.publicKey = publicKey
        self.signature = signature
    }

    var fields: [String: AnyEncodable] {
        ["proofKey": AnyEncodable(self.publicKey.jwk), "proofKeySignature": AnyEncodable(Base64.urlEncode(self.signature))]
    }
}

/// An `Encodable` of any type, for bodies mixing strings and objects.
struct AnyEncodable: Encodable, Sendable {
    let encode: @Sendable (any Encoder) throws -> Void

    init(_ value: some Encodable & Sendable) {
        self.encode = { try value.encode(to: $0) }
    }

    func encode(to encoder: any Encoder) throws { try self.encode(encoder) }
}
