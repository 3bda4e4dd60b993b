public import Crypto
public import Foundation
import TouchstoneCrypto
public import _CryptoExtras

/// A client's side of DPoP for the tests: a key and the proofs it signs (RFC 9449 §4.2), edited to break one check.
public struct DPoPProofMaker {
    public enum Key { case p256(P256.Signing.PrivateKey), ed25519(Curve25519.Signing.PrivateKey), rsa(_RSA.Signing.PrivateKey, pss: Bool) }
    public var key: Key

    public init(key: Key) {
        self.key = key
    }

    public static func p256() -> DPoPProofMaker { DPoPProofMaker(key: .p256(P256.Signing.PrivateKey())) }

    public var alg: String {
        switch self.key {
        case .p256: "ES256"
        case .ed25519: "EdDSA"
        case .rsa(_, let pss): pss ? "PS256" : "RS256"
        }
    }

    public var jwk: [String: String] {
        switch self.key {
        case .p256(let key):
            let point = Array(key.publicKey.x963Representation)
            return ["kty": "EC", "crv": "P-256", "x": Base64.urlEncode(Array(point[1..<33])), "y": Base64.urlEncode(Array(point[33..<65]))]
        case .ed25519(let key): return ["kty": "OKP", "crv": "Ed25519", "x": Base64.urlEncode(Array(key.publicKey.rawRepresentation))]
        case .rsa(let key, _):
            let (n, e) = Self.rsaComponents(Array(key.publicKey.derRepresentation))
            return ["kty": "RSA", "n": Base64.urlEncode(n), "e": Base64.urlEncode(e)]
        }
    }

    public func sign(_ input: [UInt8]) -> [UInt8] {
        switch self.key {
        case .p256(let key): Array(try! key.signature(for: input).rawRepresentation)
        case .ed25519(let key): Array(try! key.signature(for: input))
        case .rsa(let key, let pss): Array(try! key.signature(for: input, padding: pss ? .PSS : .insecurePKCS1v1_5).rawRepresentation)
        }
    }

    /// A proof; `header` and `claims` edit what is signed, `signature` what is sent.
    public func proof(
        method: String = "POST",
        url: String = "https://auth.example.com/oauth2/token",
        iat: Date = Date(timeIntervalSince1970: 1_800_000_000),
        accessToken: String? = nil,
        nonce: String? = nil,
        header edit: (inout [String: Any]) -> Void = { _ in },
        claims editClaims: (inout [String: Any]) -> Void = { _ in },
        signature editSignature: ([UInt8]) -> [UInt8] = { $0 }
    ) -> String {
        var header: [String: Any] = ["typ": "dpop+jwt", "alg": self.alg, "jwk": self.jwk]
        edit(&header)
        var claims: [String: Any] = ["jti": UUID().uuidString, "htm": method, "htu": url, "iat": Int(iat.timeIntervalSince1970)]
        if let accessToken { claims["ath"] = Base64.urlEncode(Array(SHA256.hash(data: Array(accessToken.utf8)))) }
        if let nonce { claims["nonce"] = nonce }
        editClaims(&claims)
        let encode = { (object: [String: Any]) in Base64.urlEncode(Array(try! JSONSerialization.data(withJSONObject: object, options: .sortedKeys))) }
        let input = encode(header) + "." + encode(claims)
        return input + "." + Base64.urlEncode(editSignature(self.sign(Array(input.utf8))))
    }

    /// The modulus and exponent of an RSA SubjectPublicKeyInfo (tests only: fixed layout of swift-crypto's DER).
    public static func rsaComponents(_ spki: [UInt8]) -> ([UInt8], [UInt8]) {
        var index = 0
        func length(_ at: inout Int) -> Int {
            let first = Int(spki[at]); at += 1
            guard first & 0x80 != 0 else { return first }
            var value = 0
            for _ in 0..<(first & 0x7f) { value = value << 8 | Int(spki[at]); at += 1 }
            return value
        }
        func enter(_ at: inout Int) { at += 1; _ = length(&at) }
        enter(&index)  // SubjectPublicKeyInfo
        index += 1; index += length(&index)  // AlgorithmIdentifier
        index += 1; _ = length(&index); index += 1  // BIT STRING and its unused-bits byte
        enter(&index)  // RSAPublicKey
        func integer(_ at: inout Int) -> [UInt8] {
            at += 1
            let count = length(&at)
            var bytes = Array(spki[at..<at + count]); at += count
            while bytes.first == 0 { bytes.removeFirst() }
            return bytes
        }
        let n = integer(&index)
        return (n, integer(&index))
    }
}

extension DPoPProofMaker {
    /// The key's RFC 7638 thumbprint, as `dpop_jkt` and `cnf.jkt` carry it.
    public var thumbprint: String {
        let members = self.jwk.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\"\($0.value)\"" }.joined(separator: ",")
        return Base64.urlEncode(Array(SHA256.hash(data: Array("{\(members)}".utf8))))
    }
}
