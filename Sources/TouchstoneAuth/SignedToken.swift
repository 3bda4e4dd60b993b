public import Foundation
public import JWTKit

/// The protected header of a JWS in compact form, as far as verification needs it.
public struct TokenHeader: Codable, Sendable, Hashable {
    public var alg: String?
    public var typ: String?
    public var kid: String?
}

/// The steps every signed Touchstone token goes through before its claims are looked at: its form, its header's
/// algorithm and type, the key its `kid` names, and the signature with that key only (verified by jwt-kit).
public enum SignedToken {
    /// Tokens longer than this are refused unread.
    public static let maximumLength = 16 * 1024

    /// Decodes the header without verifying anything (for inspection and for choosing the key).
    public static func header(of token: String) throws(TokenVerificationError) -> TokenHeader {
        let parts = try Self.parts(token)
        guard let bytes = Self.base64URLDecode(parts[0]), let header = try? JSONDecoder().decode(TokenHeader.self, from: bytes) else {
            throw TokenVerificationError(.malformed, "the header is not base64url JSON")
        }
        return header
    }

    /// Decodes the payload without verifying anything (for inspection only: never trust what it says).
    public static func unverifiedPayload<Payload: Decodable>(of token: String, as type: Payload.Type) throws(TokenVerificationError) -> Payload {
        let parts = try Self.parts(token)
        guard let bytes = Self.base64URLDecode(parts[1]), let payload = try? JSONDecoder().decode(Payload.self, from: bytes) else {
            throw TokenVerificationError(.malformed, "the payload is not the expected JSON")
        }
        return payload
    }

    /// Verifies the header and the signature of `token` and decodes its payload.
    ///
    /// - Parameters:
    ///   - token: A JWS in compact serialisation.
    ///   - type: The `typ` the header must carry (compared without case; `application/` before it is allowed).
    ///   - keys: Where the key named by the header's `kid` is found.
    /// - Throws: ``TokenVerificationError`` with the first step that failed.
    public static func verify<Payload: JWTPayload>(
        _ token: String,
        as payloadType: Payload.Type,
        type: String,
        keys: any VerificationKeyProvider
    ) async throws(TokenVerificationError) -> (header: TokenHeader, payload: Payload, key: VerificationKey) {
        let header = try Self.header(of: token)
        // The algorithm comes from the key, never from the token: `none`, HMAC (which would use the public key as a
        // shared secret) and anything else are refused before any key is looked at.
        guard let alg = header.alg, VerificationKey.supportedAlgorithms.contains(alg) else {
            throw TokenVerificationError(.unsupportedAlgorithm, "alg '\(header.alg ?? "")' is not accepted (only ES256 and EdDSA)")
        }
        guard let typ = header.typ, Self.typeMatches(typ, type) else {
            throw TokenVerificationError(.wrongType, "typ '\(header.typ ?? "")' is not '\(type)'")
        }
        guard let kid = header.kid, !kid.isEmpty else { throw TokenVerificationError(.malformed, "the header has no kid") }
        guard let key = try await keys.key(for: kid) else {
            throw TokenVerificationError(.unknownKey, "no key of the issuer has kid '\(kid)'")
        }
        guard key.algorithm == alg else {
            throw TokenVerificationError(.algorithmMismatch, "alg '\(alg)' is not the algorithm of key '\(kid)' (\(key.algorithm))")
        }
        do {
            let payload = try await key.collection.verify(token, as: Payload.self)
            return (header, payload, key)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw TokenVerificationError(.invalidSignature, "the signature does not verify with key '\(kid)'")
        } catch {
            throw TokenVerificationError(.malformed, "the token could not be verified: \(error)")
        }
    }

    static func typeMatches(_ header: String, _ expected: String) -> Bool {
        let value = header.lowercased()
        return value == expected.lowercased() || value == "application/" + expected.lowercased()
    }

    static func parts(_ token: String) throws(TokenVerificationError) -> [Substring] {
        guard token.utf8.count <= Self.maximumLength else { throw TokenVerificationError(.malformed, "the token is too long") }
        // By bytes: splitting a String by Characters runs grapheme breaking over the whole token.
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map { Substring($0) }
        // An empty signature is left to fail later: an unsecured token (`alg: none`) is refused by its algorithm.
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw TokenVerificationError(.malformed, "a JWT has three parts separated by dots")
        }
        return parts
    }

    /// Unpadded base64url (RFC 4648 §5), as JWS uses it.
    static func base64URLDecode(_ text: Substring) -> Data? {
        guard text.utf8.allSatisfy({ $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
        else {
            return nil
        }
        // Byte-level (String's replacingOccurrences bridges through NSString on Linux, slower than the decoding).
        var bytes = text.utf8.map { $0 == 0x2D ? UInt8(ascii: "+") : $0 == 0x5F ? UInt8(ascii: "/") : $0 }
        bytes += repeatElement(UInt8(ascii: "="), count: (4 - bytes.count % 4) % 4)
        return Data(base64Encoded: Data(bytes))
    }
}
