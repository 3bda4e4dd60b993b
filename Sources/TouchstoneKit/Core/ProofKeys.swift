public import Foundation
public import TouchstoneCrypto
import Crypto

/// The public half of the phone's DPoP proof key (issue #43): P-256, as a JWK and its RFC 7638 thumbprint.
public struct ProofKeyPublicKey: Sendable, Hashable {
    /// The uncompressed X9.63 point (65 bytes).
    public var x963: [UInt8]

    public init(x963: [UInt8]) {
        self.x963 = x963
    }

    /// `{"kty": "EC", "crv": "P-256", "x", "y"}`.
    public var jwk: [String: String] {
        ["kty": "EC", "crv": "P-256", "x": Base64.urlEncode(Array(self.x963[1..<33])), "y": Base64.urlEncode(Array(self.x963[33..<65]))]
    }

    /// The JWK SHA-256 thumbprint (RFC 7638): what the server stores and tokens carry as `cnf.jkt`.
    public var thumbprint: String {
        let jwk = self.jwk
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(jwk["x"]!)","y":"\#(jwk["y"]!)"}"#
        return Base64.urlEncode(Array(SHA256.hash(data: Array(canonical.utf8))))
    }
}

/// A ``DeviceKeyStore`` that can also keep the phone's **proof key**: a second P-256 key, made at enrolment, that signs
/// DPoP proofs (RFC 9449) without any prompt, so that the sessions of this device's sign-ins work only from this device.
/// The Secure Enclave store makes it in the Secure Enclave (`kSecAttrAccessibleWhenUnlockedThisDeviceOnly`, no user
/// presence); the software store keeps it beside the device keys. A key store that does not conform enrols without one.
public protocol ProofKeyStore: Sendable {
    /// Creates a P-256 key under `tag` that needs no user authentication; creating over an existing tag is an error.
    func createProofKey(tag: String) async throws -> ProofKeyPublicKey
    /// The public key under `tag`; nil when there is none.
    func proofKeyPublicKey(tag: String) async throws -> ProofKeyPublicKey?
    /// An ECDSA P-256 SHA-256 signature over `message` (DER or raw r‖s), without a prompt.
    func signWithProofKey(_ message: [UInt8], tag: String) async throws -> [UInt8]
    /// Deletes the key; deleting a missing key is not an error.
    func deleteProofKey(tag: String) async throws
}

/// Signs DPoP proofs (RFC 9449 §4.2) and the proof key's enrolment signature with one proof key.
public struct DPoPProofSigner: Sendable {
    let store: any ProofKeyStore
    let tag: String
    public let publicKey: ProofKeyPublicKey
    /// The proof header, base64url: the same for every proof of this key (`alg`, `jwk`, `typ`), so made once.
    let encodedHeader: String

    /// A signer for the proof key under `tag` in `store`, whose public key is `publicKey`.
    public init(store: any ProofKeyStore, tag: String, publicKey: ProofKeyPublicKey) {
        self.store = store
        self.tag = tag
        self.publicKey = publicKey
        let jwk = publicKey.jwk
        // Members in lexicographic order, no white space (what JSONSerialization's sortedKeys wrote before).
        let header = #"{"alg":"ES256","jwk":{"crv":"P-256","kty":"EC","x":"\#(jwk["x"]!)","y":"\#(jwk["y"]!)"},"typ":"dpop+jwt"}"#
        self.encodedHeader = Base64.urlEncode(Array(header.utf8))
    }

    /// A proof for one request: `typ` `dpop+jwt`, ES256, the public `jwk`; `jti`, `htm`, `htu` (the URL without query
    /// and fragment), `iat`, and `ath` (the SHA-256 of `accessToken`) and `nonce` when given.
    ///
    /// Written without a JSON encoder: a bound session signs one per request, so the proof is a few string appends
    /// and one signature.
    public func proof(method: String, url: String, accessToken: String?, nonce: String?, issuedAt: Date, jti: String = UUID().uuidString)
        async throws -> String
    {
        var claims = "{"
        if let accessToken { claims += #""ath":"\#(Base64.urlEncode(Array(SHA256.hash(data: Array(accessToken.utf8)))))","# }
        claims += #""htm":\#(Self.jsonString(method)),"htu":\#(Self.jsonString(Self.withoutQuery(url))),"#
        claims += #""iat":\#(Int(issuedAt.timeIntervalSince1970)),"jti":\#(Self.jsonString(jti))"#
        if let nonce { claims += #","nonce":\#(Self.jsonString(nonce))"# }
        claims += "}"
        let input = self.encodedHeader + "." + Base64.urlEncode(Array(claims.utf8))
        return input + "." + Base64.urlEncode(try await self.signRaw(Array(input.utf8)))
    }

    /// `text` as a JSON string (RFC 8259 §7): quote, backslash and control characters escaped, nothing else.
    static func jsonString(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return "\"\(text)\"" }
        var escaped = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped + "\""
    }

    /// The raw 64-byte r‖s signature JWS needs (RFC 7518 §3.4), whatever the store returns.
    func signRaw(_ message: [UInt8]) async throws -> [UInt8] {
        let signature: [UInt8]
        do {
            signature = try await self.store.signWithProofKey(message, tag: self.tag)
        } catch let error as BiometricLoginError {
            throw error
        } catch {
            throw BiometricLoginError(.internalFailure, "the proof key cannot sign: \(error)")
        }
        if signature.count == 64 { return signature }
        guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else {
            throw BiometricLoginError(.internalFailure, "the proof key returned an unreadable signature")
        }
        return Array(parsed.rawRepresentation)
    }

    /// What both keys sign at enrolment: `<challenge>.<thumbprint>` (the server's rule; docs/api.md).
    static func enrolmentMessage(challenge: String, proofKey: ProofKeyPublicKey?) -> [UInt8] {
        Array((proofKey.map { "\(challenge).\($0.thumbprint)" } ?? challenge).utf8)
    }

    static func withoutQuery(_ url: String) -> String {
        String(url.prefix { $0 != "?" && $0 != "#" })
    }
}

/// The sessions a client holds that are bound to a proof key, and the server's latest DPoP nonce: shared by every copy
/// of a ``TouchstoneClient``.
actor DPoPBindings {
    private var signers: [String: DPoPProofSigner] = [:]
    private(set) var nonce: String?
    /// How far the server's clock is ahead of this one, learnt from a `Date` header when a proof was refused as too
    /// old or too new (a phone whose clock is off); added to every proof's `iat`.
    private(set) var clockOffset: TimeInterval = 0

    func adjustClock(serverDate: Date, localDate: Date) { self.clockOffset = serverDate.timeIntervalSince(localDate) }

    /// At most this many sessions are held; the oldest binding goes first (an app holds a few sessions at a time).
    static let capacity = 256
    private var order: [String] = []

    func bind(token: String, to signer: DPoPProofSigner) {
        if self.signers.updateValue(signer, forKey: token) == nil { self.order.append(token) }
        while self.order.count > Self.capacity { self.signers[self.order.removeFirst()] = nil }
    }

    func unbind(token: String) {
        guard self.signers.removeValue(forKey: token) != nil else { return }
        self.order.removeAll { $0 == token }
    }
    func signer(for token: String) -> DPoPProofSigner? { self.signers[token] }
    func remember(nonce: String) { self.nonce = nonce }
}
