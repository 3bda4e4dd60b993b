public import Foundation
public import X509
import Crypto
import _CryptoExtras
import SwiftASN1
import TouchstoneCrypto

/// A verified FIDO Metadata Service (MDS3) BLOB: the list of authenticator models the FIDO Alliance knows, with their
/// attestation roots, certification and security status.
///
/// The BLOB is a JWS (compact serialization) whose header carries the signing certificate chain (`x5c`); it is
/// accepted only when the chain reaches a configured root (``FIDOMetadataRoot``: GlobalSign Root CA - R3 for the
/// FIDO Alliance's service), the signature verifies, it is newer than the one in use (`no`) and not stale
/// (`nextUpdate`). FIDO Metadata Service v3.1 §3.1.7–3.1.8:
/// https://fidoalliance.org/specs/mds/fido-metadata-service-v3.1-ps-20250521.html
public struct MetadataBLOB: Sendable {
    /// The BLOB's serial number (`no`): a later BLOB has a larger one.
    public let number: Int
    /// When the next BLOB is due (`nextUpdate`, a date: midnight UTC of that day).
    public let nextUpdate: Date
    public let legalHeader: String?
    public let entries: [MetadataEntry]
    /// The JWS as it was verified (what is stored and shared between instances).
    public let jws: String

    private let byAAGUID: [String: Int]
    private let byKeyIdentifier: [String: Int]

    /// The entry of an authenticator model by AAGUID (lowercase UUID form).
    public func entry(aaguid: String) -> MetadataEntry? {
        self.byAAGUID[aaguid.lowercased()].map { self.entries[$0] }
    }

    /// The entry of a U2F authenticator by the key identifier of its attestation certificate (lowercase hex SHA-1 of
    /// the certificate's subjectPublicKey, ``MetadataEntry/keyIdentifier(of:)``).
    public func entry(keyIdentifier: String) -> MetadataEntry? {
        self.byKeyIdentifier[keyIdentifier.lowercased()].map { self.entries[$0] }
    }

    /// The entry that describes an authenticator: by the key identifier of its attestation certificate for FIDO U2F
    /// (`format` `fido-u2f`, whose authenticators have no AAGUID), else by AAGUID unless it is all zeros.
    ///
    /// - Parameter keyIdentifier: The attestation certificate's ``MetadataEntry/keyIdentifier(of:)``, if there is one.
    public func entry(format: String, aaguid: String, keyIdentifier: String?) -> MetadataEntry? {
        if format == "fido-u2f" { return keyIdentifier.flatMap { self.entry(keyIdentifier: $0) } }
        return aaguid == MetadataEntry.zeroAAGUID ? nil : self.entry(aaguid: aaguid)
    }

    /// Whether the BLOB is past its `nextUpdate` day at `time` (a BLOB is accepted through the whole day it names).
    public func isStale(at time: Date) -> Bool {
        time >= self.nextUpdate.addingTimeInterval(86_400)
    }

    /// Verifies a BLOB.
    ///
    /// - Parameters:
    ///   - jws: The BLOB as served (`header.payload.signature`, base64url parts).
    ///   - roots: The roots its `x5c` chain must reach.
    ///   - time: When certificates must be valid and the BLOB not yet stale.
    ///   - newerThan: The serial number of the BLOB in use: a BLOB whose `no` is not larger is refused (a replayed or
    ///     downgraded BLOB). `nil` when none is in use.
    ///   - acceptStale: Accept a BLOB past its `nextUpdate` (one that was fresh when first verified and stored, read
    ///     again while no newer one could be had); a BLOB fetched from its source never is.
    /// - Throws: ``MetadataError`` saying which check failed.
    public static func verify(
        jws: String,
        roots: [Certificate],
        at time: Date,
        newerThan current: Int? = nil,
        acceptStale: Bool = false
    ) async throws(MetadataError) -> MetadataBLOB {
        let text = jws.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw MetadataError(.malformed, "the BLOB is not a JWS in compact form (three parts)") }
        guard let headerBytes = Base64.decode(String(parts[0]), maxDecodedLength: 256 * 1024),
            let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes))
        else {
            throw MetadataError(.malformed, "the BLOB's header is not base64url JSON with 'alg'")
        }
        guard let signature = Base64.decode(String(parts[2]), maxDecodedLength: 4096), !signature.isEmpty else {
            throw MetadataError(.malformed, "the BLOB's signature is not base64url")
        }
        // The signing chain: x5c (standard base64 DER), leaf first. A BLOB naming its chain only by x5u is refused:
        // fetching certificates named by the document being verified is not done here.
        guard let encoded = header.x5c, !encoded.isEmpty, encoded.count <= 8 else {
            throw MetadataError(.malformed, "the BLOB's header carries no x5c certificate chain")
        }
        var chain: [Certificate] = []
        for item in encoded {
            guard let der = Base64.decode(item, maxDecodedLength: 64 * 1024), let certificate = try? Certificate(derEncoded: der) else {
                throw MetadataError(.malformed, "the BLOB's x5c holds something that is not a DER certificate")
            }
            chain.append(certificate)
        }
        guard !roots.isEmpty, await Self.chainIsTrusted(chain, roots: roots, at: time) else {
            throw MetadataError(.untrustedChain, "the BLOB's signing certificate does not chain to a metadata root valid at \(time)")
        }
        let signedBytes = Array(text.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        try Self.checkSignature(signature, over: signedBytes, algorithm: header.alg, key: chain[0].publicKey)

        guard let payloadBytes = Base64.decode(String(parts[1]), maxDecodedLength: Self.maximumPayloadSize) else {
            throw MetadataError(.malformed, "the BLOB's payload is not base64url")
        }
        let payload: Payload
        do {
            payload = try JSONDecoder().decode(Payload.self, from: Data(payloadBytes))
        } catch {
            throw MetadataError(.malformed, "the BLOB's payload is not a metadata BLOB: \(Self.describe(error))")
        }
        guard let nextUpdate = MetadataEntry.date(payload.nextUpdate) else {
            throw MetadataError(.malformed, "nextUpdate '\(payload.nextUpdate.prefix(40))' is not a date (YYYY-MM-DD)")
        }
        if let current, payload.no <= current {
            throw MetadataError(.notNewer, "the BLOB's number \(payload.no) is not newer than the one in use (\(current))")
        }
        let entries = try payload.entries.map { entry throws(MetadataError) in try MetadataEntry(entry) }
        let blob = MetadataBLOB(number: payload.no, nextUpdate: nextUpdate, legalHeader: payload.legalHeader, entries: entries, jws: text)
        guard acceptStale || !blob.isStale(at: time) else {
            throw MetadataError(.stale, "the BLOB was due to be replaced on \(payload.nextUpdate) (number \(payload.no))")
        }
        return blob
    }

    init(number: Int, nextUpdate: Date, legalHeader: String?, entries: [MetadataEntry], jws: String) {
        self.number = number
        self.nextUpdate = nextUpdate
        self.legalHeader = legalHeader
        self.entries = entries
        self.jws = jws
        var byAAGUID: [String: Int] = [:]
        var byKeyIdentifier: [String: Int] = [:]
        for (index, entry) in entries.enumerated() {
            if let aaguid = entry.aaguid { byAAGUID[aaguid] = index }
            for identifier in entry.attestationCertificateKeyIdentifiers { byKeyIdentifier[identifier] = index }
        }
        self.byAAGUID = byAAGUID
        self.byKeyIdentifier = byKeyIdentifier
    }

    /// The largest payload accepted (the FIDO Alliance's BLOB is a few megabytes).
    public static let maximumPayloadSize = 64 << 20

    // MARK: JWS

    struct Header: Decodable {
        var alg: String
        var x5c: [String]?
    }

    struct Payload: Decodable {
        var legalHeader: String?
        var no: Int
        var nextUpdate: String
        var entries: [MetadataEntry.JSON]
    }

    private static func checkSignature(
        _ signature: [UInt8],
        over data: [UInt8],
        algorithm: String,
        key: Certificate.PublicKey
    ) throws(MetadataError) {
        let valid: Bool
        switch algorithm {
        case "RS256", "PS256":
            guard let rsa = _RSA.Signing.PublicKey(key) else { throw MetadataError(.invalidSignature, "alg \(algorithm) needs an RSA key") }
            let digest = SHA256.hash(data: data)
            let padding: _RSA.Signing.Padding = algorithm == "RS256" ? .insecurePKCS1v1_5 : .PSS
            valid = rsa.isValidSignature(.init(rawRepresentation: signature), for: digest, padding: padding)
        case "ES256":
            guard let ec = P256.Signing.PublicKey(key) else { throw MetadataError(.invalidSignature, "alg ES256 needs a P-256 key") }
            valid = (try? P256.Signing.ECDSASignature(rawRepresentation: signature)).map { ec.isValidSignature($0, for: data) } ?? false
        case "ES384":
            guard let ec = P384.Signing.PublicKey(key) else { throw MetadataError(.invalidSignature, "alg ES384 needs a P-384 key") }
            valid = (try? P384.Signing.ECDSASignature(rawRepresentation: signature)).map { ec.isValidSignature($0, for: data) } ?? false
        default:
            throw MetadataError(.malformed, "the BLOB's alg '\(algorithm.prefix(20))' is not RS256, PS256, ES256 or ES384")
        }
        guard valid else { throw MetadataError(.invalidSignature, "the BLOB's signature does not verify with its signing certificate") }
    }

    private static func chainIsTrusted(_ chain: [Certificate], roots: [Certificate], at time: Date) async -> Bool {
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) {
            RFC5280Policy(validationTime: time)
        }
        let result = await verifier.validate(leafCertificate: chain[0], intermediates: CertificateStore(chain.dropFirst()))
        if case .validCertificate = result { return true }
        return false
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "'\((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))' is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "'\(context.codingPath.map(\.stringValue).joined(separator: "."))' has the wrong type"
        case let error as MetadataError:
            return error.reason
        default:
            return "not JSON"
        }
    }
}

/// Why a metadata BLOB was refused. ``code`` is stable; ``reason`` explains.
public struct MetadataError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Not a JWS, or not a metadata BLOB inside.
        case malformed
        /// The `x5c` chain reaches no metadata root (or a certificate is outside its validity).
        case untrustedChain = "untrusted_chain"
        case invalidSignature = "invalid_signature"
        /// `no` is not larger than the BLOB in use: replayed or downgraded.
        case notNewer = "not_newer"
        /// Past `nextUpdate`.
        case stale
    }

    public let code: Code
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.code) }
    public var description: String { "\(self.code.rawValue): \(self.reason)" }
}
