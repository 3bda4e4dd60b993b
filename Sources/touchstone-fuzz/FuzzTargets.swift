import Crypto
import Foundation
import TouchstoneCrypto
import TouchstoneDPoP
import TouchstoneWebAuthn

/// The parsers that read attacker-controlled bytes, each as a fuzz target: any crash, sanitizer report or failed
/// precondition is a finding. Thrown errors are the expected outcome for bad input.
enum FuzzTarget: String, CaseIterable {
    case cbor
    case authenticatorData = "authenticator-data"
    case attestationObject = "attestation-object"
    case coseKey = "cose-key"
    case publicKey = "public-key"
    case signature
    case clientData = "client-data"
    case dpopProof = "dpop-proof"

    func run(_ bytes: [UInt8]) {
        switch self {
        case .cbor: Self.cbor(bytes)
        case .authenticatorData: _ = try? AuthenticatorData(bytes: bytes)
        case .attestationObject: Self.attestationObject(bytes)
        case .coseKey: Self.coseKey(bytes)
        case .publicKey: Self.publicKey(bytes)
        case .signature: Self.signature(bytes)
        case .clientData: _ = try? CollectedClientData(bytes: bytes)
        case .dpopProof: Self.dpopProof(bytes)
        }
    }

    /// A DPoP proof (RFC 9449) as the `DPoP` header brings it: every check of the parser, with and without an access
    /// token and a demanded nonce. A proof that passes has a 43-character thumbprint and a jti of 1 to 256 bytes without control characters.
    static func dpopProof(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let verifier = DPoPVerifier(maximumAge: 300, allowedSkew: 300)
        for token in [nil, "token"] as [String?] {
            let verified = try? verifier.verify(
                text, method: "POST", url: "https://fuzz.example/oauth2/token", accessToken: token,
                nonce: token == nil ? nil : { $0 == "n" }, at: Date(timeIntervalSince1970: 1_800_000_000))
            if let verified {
                precondition(verified.thumbprint.utf8.count == 43, "a thumbprint is not 43 characters")
                precondition((1...256).contains(verified.jti.utf8.count), "an accepted jti is empty or too long")
                precondition(
                    !verified.jti.unicodeScalars.contains { $0.properties.generalCategory == .control },
                    "an accepted jti holds a control character"
                )
            }
        }
    }

    /// A decoded item's canonical encoding decodes again, to an item with the same canonical encoding (map order
    /// may differ from the input's, so the items themselves are not compared).
    static func cbor(_ bytes: [UInt8]) {
        guard let item = try? CBORDecoder().decode(bytes) else { return }
        let encoded = CBOREncoder.encode(item)
        guard let again = try? CBORDecoder().decode(encoded) else {
            preconditionFailure("a decoded item does not decode after canonical encoding")
        }
        precondition(CBOREncoder.encode(again) == encoded, "CBOR canonical encoding is not stable")
    }

    static let relyingParty = RelyingParty(id: "fuzz.example", name: "Fuzz", origins: ["https://fuzz.example"])
    static let challenge = [UInt8](repeating: 0x42, count: 32)
    static let clientDataJSON = Array(
        #"{"type":"webauthn.create","challenge":"\#(Base64.urlEncode(challenge))","origin":"https://fuzz.example"}"#.utf8
    )

    /// The whole registration verification with genuine client data and a fuzzed attestation object: CBOR, the
    /// authenticator data, the COSE key and every attestation format's statement and certificates.
    static func attestationObject(_ bytes: [UInt8]) {
        let done = DispatchSemaphore(value: 0)
        Task {
            _ = try? await Self.relyingParty.verifyRegistration(
                clientDataJSON: Self.clientDataJSON,
                attestationObject: bytes,
                challenge: Self.challenge,
                at: Date(timeIntervalSince1970: 1_800_000_000)
            )
            done.signal()
        }
        done.wait()
    }

    /// A parsed COSE key verifies (or not) a signature without crashing; the signature is the input again.
    static func coseKey(_ bytes: [UInt8]) {
        guard let key = try? COSEKey(bytes: bytes) else { return }
        _ = key.isValidSignature(bytes, for: Self.challenge)
        _ = key.bytes
    }

    /// Every algorithm's key parser, on the bytes and on the bytes as text (PEM, base64).
    static func publicKey(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        for algorithm in SignatureAlgorithm.allCases {
            if let key = try? DevicePublicKey(bytes: bytes, algorithm: algorithm) {
                _ = key.fingerprint
                _ = key.isValidSignature(bytes, for: Self.challenge)
            }
            _ = try? DevicePublicKey(encoded: text, algorithm: algorithm)
        }
    }

    /// Fixed keys of each algorithm checking fuzzed signatures (DER and raw ECDSA, Ed25519, RSA PKCS#1 v1.5).
    static let keys: [DevicePublicKey] = {
        let p256 = try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x11, count: 32))
        let ed25519 = try! Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0x22, count: 32))
        return [
            try! DevicePublicKey(bytes: [UInt8](p256.publicKey.x963Representation), algorithm: .es256),
            try! DevicePublicKey(bytes: [UInt8](ed25519.publicKey.rawRepresentation), algorithm: .eddsa),
            try! DevicePublicKey(encoded: Self.rsaPublicKeyPEM, algorithm: .rs256),
        ]
    }()

    static func signature(_ bytes: [UInt8]) {
        for key in Self.keys {
            _ = key.isValidSignature(bytes, for: Self.challenge)
        }
    }

    /// A 2048-bit RSA public key (generated for this purpose with `openssl genrsa 2048`; public data only).
    static let rsaPublicKeyPEM = """
        -----BEGIN PUBLIC KEY-----
        MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA0fpROObS/3AxofbJDTcv
        +RihxmGyyWGmhDvqRWZiip8J8EyWI8EQfgOMlUTq2cBYn0adL71s1H1D35XpQR9L
        J8J/UTXNCHoRloI+f56tEoOZeMPYoFi35KAlknjPQmsrE9wH55KSMs17Xaz7F/py
        Bao8AACw+3pOf04qhKYHLBxxev+QT1KGXms48iaNFYVBkAT3JAbxL2VVcWafsFxq
        NLHfT/tSRrU8TEY80qlQ3Jv0YKB/CW7chMXOd4qmGzZA+mJ/2U93bEB/NL0rF4Dv
        35sdrgMgvqHb1ndcRkO4+5Ka1lEYLbdpgqxDr2maa0jM9BKvzA3Eff8CjwFTmD4O
        gwIDAQAB
        -----END PUBLIC KEY-----
        """
}
