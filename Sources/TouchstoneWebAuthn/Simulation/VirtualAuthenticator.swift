public import Foundation
import Crypto
import TouchstoneCrypto

/// A software authenticator that answers WebAuthn ceremonies with spec-shaped data: for tests, and for the CLI's
/// simulated device. Tests set its flags, counter and attestation format to exercise every verification step.
public struct VirtualAuthenticator: Sendable {
    /// A credential the authenticator created. It holds the private key: never use outside tests and simulations.
    public struct Credential: Sendable {
        enum PrivateKey: Sendable {
            case p256(P256.Signing.PrivateKey)
            case ed25519(Curve25519.Signing.PrivateKey)
        }

        public let id: [UInt8]
        public let rpId: String
        public let userHandle: [UInt8]
        public let algorithm: COSEAlgorithm
        public var signCount: UInt32
        let privateKey: PrivateKey

        /// The COSE_Key encoding of the public key.
        public var publicKeyCOSE: [UInt8] {
            switch self.privateKey {
            case .p256(let key):
                let point = Array(key.publicKey.x963Representation)
                return CBOREncoder.encode(
                    .map([
                        .int(1): .int(2), .int(3): .int(-7), .int(-1): .int(1),
                        .int(-2): .bytes(Array(point[1..<33])), .int(-3): .bytes(Array(point[33..<65])),
                    ])
                )
            case .ed25519(let key):
                return CBOREncoder.encode(
                    .map([.int(1): .int(1), .int(3): .int(-8), .int(-1): .int(6), .int(-2): .bytes(Array(key.publicKey.rawRepresentation))])
                )
            }
        }

        func sign(_ data: [UInt8]) -> [UInt8] {
            switch self.privateKey {
            case .p256(let key): return Array((try! key.signature(for: data)).derRepresentation)
            case .ed25519(let key): return Array(try! key.signature(for: data))
            }
        }
    }

    /// The attestation statement format to produce.
    public enum AttestationFormat: String, Sendable {
        case none
        /// `packed` self attestation: signed by the new credential key.
        case packedSelf = "packed"
    }

    public var aaguid: [UInt8] = [UInt8](repeating: 0, count: 16)
    public var flags: AuthenticatorData.Flags = [.userPresent, .userVerified, .backupEligible, .backupState]
    public var attestationFormat: AttestationFormat = .none
    /// How much the counter grows per assertion; 0 models a passkey provider that never counts.
    public var counterStep: UInt32 = 1

    public init() {}

    /// What `navigator.credentials.create()` hands the page.
    public struct Registration: Sendable {
        public var credential: Credential
        public var clientDataJSON: [UInt8]
        public var attestationObject: [UInt8]
        public var authenticatorData: [UInt8]
    }

    /// What `navigator.credentials.get()` hands the page.
    public struct Assertion: Sendable {
        public var credentialId: [UInt8]
        public var clientDataJSON: [UInt8]
        public var authenticatorData: [UInt8]
        public var signature: [UInt8]
        public var userHandle: [UInt8]
    }

    /// Creates a credential and its attestation for `rpId`, as a browser at `origin` would report it.
    public func register(
        rpId: String,
        origin: String,
        challenge: [UInt8],
        userHandle: [UInt8],
        algorithm: COSEAlgorithm = .es256,
        credentialId: [UInt8]? = nil,
        clientData: [String: any Sendable] = [:]
    ) -> Registration {
        let privateKey: Credential.PrivateKey = algorithm == .eddsa ? .ed25519(.init()) : .p256(.init())
        let credential = Credential(
            id: credentialId ?? (0..<32).map { _ in UInt8.random(in: 0...255) },
            rpId: rpId,
            userHandle: userHandle,
            algorithm: algorithm == .eddsa ? .eddsa : .es256,
            signCount: 0,
            privateKey: privateKey
        )
        let clientDataJSON = Self.clientData(type: "webauthn.create", challenge: challenge, origin: origin, extra: clientData)
        let authData = self.authenticatorData(rpId: rpId, signCount: 0, attested: credential)
        var statement = CBORMap()
        if self.attestationFormat == .packedSelf {
            let signed = authData + Array(SHA256.hash(data: clientDataJSON))
            statement = [.text("alg"): .int(credential.algorithm.rawValue), .text("sig"): .bytes(credential.sign(signed))]
        }
        let attestationObject = CBOREncoder.encode(
            .map([
                .text("fmt"): .text(self.attestationFormat.rawValue), .text("attStmt"): .map(statement),
                .text("authData"): .bytes(authData),
            ])
        )
        return Registration(
            credential: credential,
            clientDataJSON: clientDataJSON,
            attestationObject: attestationObject,
            authenticatorData: authData
        )
    }

    /// Signs an assertion with `credential`, advancing its counter.
    public func assert(
        _ credential: inout Credential,
        origin: String,
        challenge: [UInt8],
        clientData: [String: any Sendable] = [:]
    ) -> Assertion {
        credential.signCount &+= self.counterStep
        let clientDataJSON = Self.clientData(type: "webauthn.get", challenge: challenge, origin: origin, extra: clientData)
        let authData = self.authenticatorData(rpId: credential.rpId, signCount: credential.signCount, attested: nil)
        let signature = credential.sign(authData + Array(SHA256.hash(data: clientDataJSON)))
        return Assertion(
            credentialId: credential.id,
            clientDataJSON: clientDataJSON,
            authenticatorData: authData,
            signature: signature,
            userHandle: credential.userHandle
        )
    }

    /// Authenticator data for `rpId`; with `attested`, the attested credential data flag and block are added.
    public func authenticatorData(rpId: String, signCount: UInt32, attested: Credential?) -> [UInt8] {
        var flags = self.flags
        if attested != nil { flags.insert(.attestedCredentialData) } else { flags.remove(.attestedCredentialData) }
        flags.remove(.extensionData)
        var data = Array(SHA256.hash(data: Array(rpId.utf8)))
        data.append(flags.rawValue)
        data += withUnsafeBytes(of: signCount.bigEndian, Array.init)
        if let attested {
            data += self.aaguid
            data += [UInt8(attested.id.count >> 8), UInt8(attested.id.count & 0xFF)]
            data += attested.id
            data += attested.publicKeyCOSE
        }
        return data
    }

    /// clientDataJSON with the members in the order browsers write them; `extra` adds or overrides members.
    public static func clientData(type: String, challenge: [UInt8], origin: String, extra: [String: any Sendable] = [:])
        -> [UInt8]
    {
        var members: [(String, any Sendable)] = [
            ("type", type), ("challenge", Base64.urlEncode(challenge)), ("origin", origin), ("crossOrigin", false),
        ]
        for (key, value) in extra.sorted(by: { $0.key < $1.key }) {
            if let index = members.firstIndex(where: { $0.0 == key }) { members[index].1 = value } else { members.append((key, value)) }
        }
        let body = members.map { key, value -> String in
            let encoded: String
            switch value {
            case let bool as Bool: encoded = bool ? "true" : "false"
            case let text as String:
                let encoder = JSONEncoder()
                encoder.outputFormatting = .withoutEscapingSlashes
                encoded = String(decoding: try! encoder.encode(text), as: UTF8.self)
            default: encoded = "\(value)"
            }
            return "\"\(key)\":\(encoded)"
        }.joined(separator: ",")
        return Array("{\(body)}".utf8)
    }
}

extension VirtualAuthenticator.Credential: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, rpId, userHandle, algorithm, signCount, privateKey
    }

    /// Encodes the credential with its private key (base64url): keep such files private (mode 0600).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Base64.urlEncode(self.id), forKey: .id)
        try container.encode(self.rpId, forKey: .rpId)
        try container.encode(Base64.urlEncode(self.userHandle), forKey: .userHandle)
        try container.encode(self.algorithm, forKey: .algorithm)
        try container.encode(self.signCount, forKey: .signCount)
        switch self.privateKey {
        case .p256(let key): try container.encode(Base64.urlEncode(key.rawRepresentation), forKey: .privateKey)
        case .ed25519(let key): try container.encode(Base64.urlEncode(key.rawRepresentation), forKey: .privateKey)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func bytes(_ key: CodingKeys) throws -> [UInt8] {
            guard let value = Base64.decode(try container.decode(String.self, forKey: key)) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not base64url")
            }
            return value
        }
        self.id = try bytes(.id)
        self.rpId = try container.decode(String.self, forKey: .rpId)
        self.userHandle = try bytes(.userHandle)
        self.algorithm = try container.decode(COSEAlgorithm.self, forKey: .algorithm)
        self.signCount = try container.decode(UInt32.self, forKey: .signCount)
        let raw = try bytes(.privateKey)
        switch self.algorithm {
        case .eddsa: self.privateKey = .ed25519(try Curve25519.Signing.PrivateKey(rawRepresentation: raw))
        default: self.privateKey = .p256(try P256.Signing.PrivateKey(rawRepresentation: raw))
        }
    }
}
