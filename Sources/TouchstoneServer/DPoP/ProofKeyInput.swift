import Foundation
import HTTPTypes
import TouchstoneCrypto
import TouchstoneDPoP
import TouchstoneWebAuthn

/// A phone's DPoP proof key as enrolment, a device-key sign-up and `POST /v1/biometrics/registrations/{id}/proof-key`
/// send it (issue #43): `proofKey`, its public JWK, and `proofKeySignature`, its signature over the same message the
/// device key signs. The device key's signature vouches that the proof key lives on the same phone; the proof key's
/// own shows it is held (no one registers another's key).
struct ProofKeyInput: Sendable {
    var key: DPoPPublicKey
    var signature: [UInt8]
    /// `proofKeyAttestation`: the proof key's Android key attestation chain (base64 DER, leaf first), as the device key's.
    var attestationChain: [String]?
    /// What the chain attested, once the controller verified it (``verifyAttestation(with:)``): its challenge is checked
    /// against the enrolment's.
    var attestedChallenge: [UInt8]?

    var thumbprint: String { self.key.thumbprint }

    /// What both keys sign when a proof key comes along: the UTF-8 bytes of `<challenge>.<thumbprint>` (the challenge
    /// alone without one).
    static func message(challenge: String, proofKey: ProofKeyInput?) -> String {
        proofKey.map { "\(challenge).\($0.thumbprint)" } ?? challenge
    }

    /// The two fields as a request body holds them (``Fields``), read.
    ///
    /// - Throws: 400 `invalid_proof_key` for a key that is not a public P-256, Ed25519 or RSA JWK, or one without its
    ///   signature (or a signature without a key).
    static func parse(_ fields: Fields) throws -> ProofKeyInput? {
        let (jwk, text) = (fields.proofKey, fields.proofKeySignature)
        guard let jwk else {
            guard text == nil else { throw APIError.invalidProofKey("proofKeySignature without proofKey") }
            return nil
        }
        guard jwk.count <= 12, jwk.values.allSatisfy({ $0.utf8.count <= 2048 }) else {
            throw APIError.invalidProofKey("proofKey is not a public JWK")
        }
        let parsed: DPoPPublicKey
        do throws(DPoPError) {
            parsed = try DPoPPublicKey(jwk: jwk)
        } catch {
            throw APIError.invalidProofKey("proofKey: \(error.reason)")
        }
        guard let text, let bytes = Base64.urlDecodeCanonical(text) else {
            throw APIError.invalidProofKey("proofKeySignature (base64url) is required with proofKey")
        }
        return ProofKeyInput(key: parsed, signature: bytes, attestationChain: fields.proofKeyAttestation)
    }

    /// Verifies `proofKeyAttestation` when it came (a P-256 key only, as the Android Keystore makes).
    mutating func verifyAttestation(with service: AndroidKeyAttestationService) async throws {
        guard let chain = self.attestationChain else { return }
        guard let spki = self.key.p256SPKI else { throw APIError.invalidKeyAttestation("an attested proof key is a P-256 key") }
        self.attestedChallenge = try await service.verifyProofKey(chain: chain, spki: spki).challenge
    }

    /// When the device key was attested (Android key attestation), its proof key must be too: made in the same
    /// Keystore with the UTF-8 bytes of this enrolment's challenge as its attestation challenge.
    ///
    /// - Throws: 400 `invalid_key_attestation`.
    func requireAttested(challenge: String) throws {
        guard let attested = self.attestedChallenge else {
            throw APIError.invalidKeyAttestation("the device key was attested, so the proof key needs its attestation too (proofKeyAttestation)")
        }
        guard ConstantTime.equal(attested, Array(challenge.utf8)) else {
            throw APIError.invalidKeyAttestation("the proof key's attestation challenge is not this enrolment's challenge")
        }
    }

    /// `proofKey` (a JWK: an object of strings) and `proofKeySignature` of a request body.
    struct Fields: Decodable, Sendable {
        var proofKey: [String: String]?
        var proofKeySignature: String?
        var proofKeyAttestation: [String]?

        enum CodingKeys: CodingKey { case proofKey, proofKeySignature, proofKeyAttestation }

        init() {}

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.proofKey = try container.decodeIfPresent([String: String].self, forKey: .proofKey)
            self.proofKeySignature = try container.decodeStringIfPresent(.proofKeySignature, maxLength: 2048)
            self.proofKeyAttestation = try container.decodeIfPresent([String].self, forKey: .proofKeyAttestation)
        }
    }

    /// - Throws: 400 `invalid_proof_key` when the proof key's signature over the message does not verify.
    func verify(challenge: String) throws {
        let message = Array(Self.message(challenge: challenge, proofKey: self).utf8)
        guard self.key.isValidSignature(self.signature, over: message) else {
            throw APIError.invalidProofKey("proofKeySignature does not verify with proofKey (\(self.key.algorithm) over '<challenge>.<thumbprint>')")
        }
    }
}

extension APIError {
    static func invalidProofKey(_ message: String) -> APIError { .init(.badRequest, code: "invalid_proof_key", message: message) }
    static let proofKeyInUse = APIError(.conflict, code: "proof_key_in_use", message: "this proof key is registered with another device key")
    static let proofKeyExists = APIError(
        .conflict, code: "proof_key_exists", message: "this registration has a proof key already (a new one needs a new enrolment)")
}
