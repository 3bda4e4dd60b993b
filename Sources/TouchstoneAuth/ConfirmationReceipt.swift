public import Foundation
public import JWTKit

/// The claims of a confirmation receipt: the server's signed record that a user approved a confirmation, for the
/// app's backend to check offline (`typ: confirmation+jwt`). It has no `exp`: it is a record, not a credential.
public struct ConfirmationReceiptClaims: JWTPayload, Hashable {
    /// `iss`.
    public var issuer: String
    /// `sub`: the user id.
    public var subject: String
    /// `aud`.
    public var audience: [String]
    /// `iat`.
    public var issuedAt: Int64
    /// `jti`.
    public var tokenId: String
    /// `confirmation_id`.
    public var confirmationId: String
    /// `payload_sha256`: base64url of the SHA-256 of the payload's UTF-8 bytes.
    public var payloadSHA256: String
    /// `method`: `biometric` or `passkey`.
    public var method: String
    /// `amr`: `["hwk", "user"]`.
    public var methods: [String]

    public init(
        issuer: String,
        subject: String,
        audience: [String],
        issuedAt: Int64,
        tokenId: String,
        confirmationId: String,
        payloadSHA256: String,
        method: String,
        methods: [String]
    ) {
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        self.issuedAt = issuedAt
        self.tokenId = tokenId
        self.confirmationId = confirmationId
        self.payloadSHA256 = payloadSHA256
        self.method = method
        self.methods = methods
    }

    enum CodingKeys: String, CodingKey {
        case issuer = "iss"
        case subject = "sub"
        case audience = "aud"
        case issuedAt = "iat"
        case tokenId = "jti"
        case confirmationId = "confirmation_id"
        case payloadSHA256 = "payload_sha256"
        case method
        case methods = "amr"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.issuer = try container.decode(String.self, forKey: .issuer)
        self.subject = try container.decode(String.self, forKey: .subject)
        self.audience = try container.decodeAudience(forKey: .audience)
        self.issuedAt = try container.decode(Int64.self, forKey: .issuedAt)
        self.tokenId = try container.decode(String.self, forKey: .tokenId)
        self.confirmationId = try container.decode(String.self, forKey: .confirmationId)
        self.payloadSHA256 = try container.decode(String.self, forKey: .payloadSHA256)
        self.method = try container.decode(String.self, forKey: .method)
        self.methods = try container.decode([String].self, forKey: .methods)
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// The `typ` header of confirmation receipts.
public let confirmationReceiptType = "confirmation+jwt"

/// Checks a confirmation receipt: the signature with the issuer's key of its `kid`, `typ: confirmation+jwt`, `iss`,
/// `aud`, and (when given) the confirmation it must be for.
public struct ConfirmationReceiptVerifier: Sendable {
    public let keys: any VerificationKeyProvider
    public let issuer: String
    public let audiences: Set<String>

    public init(keys: any VerificationKeyProvider, issuer: String, audiences: [String]) {
        self.keys = keys
        self.issuer = issuer
        self.audiences = Set(audiences)
    }

    public func verify(_ receipt: String, confirmationId: String? = nil) async throws(TokenVerificationError) -> ConfirmationReceiptClaims {
        let (_, claims, _) = try await SignedToken.verify(receipt, as: ConfirmationReceiptClaims.self, type: confirmationReceiptType, keys: self.keys)
        guard claims.issuer == self.issuer else { throw TokenVerificationError(.wrongIssuer, "iss '\(claims.issuer)' is not '\(self.issuer)'") }
        guard claims.audience.contains(where: self.audiences.contains) else {
            throw TokenVerificationError(.wrongAudience, "aud \(claims.audience) names none of \(self.audiences.sorted())")
        }
        if let confirmationId, claims.confirmationId != confirmationId {
            throw TokenVerificationError(.malformed, "the receipt is for confirmation \(claims.confirmationId)")
        }
        return claims
    }
}
