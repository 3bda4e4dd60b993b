public import Foundation

/// The algorithm of the token-signing key set.
public enum TokenSigningAlgorithm: String, Sendable, Hashable, CaseIterable {
    case es256 = "ES256"
    case eddsa = "EdDSA"
}

/// Access tokens, their signing keys and the key-encryption key (`TOUCHSTONE_ISSUER`, `TOUCHSTONE_TOKEN_*`,
/// `TOUCHSTONE_SIGNING_KEY_*`, `TOUCHSTONE_KEY_ENCRYPTION_KEY[_FILE]`).
public struct TokenSettings: Sendable {
    /// `iss` of every token; `nil` means `http://localhost:<port>` (the relying party's default origin).
    public var issuer: String?
    /// `aud` of access tokens; empty means the issuer.
    public var audiences: [String] = []
    /// `aud` of confirmation receipts; empty means the issuer.
    public var receiptAudiences: [String] = []
    /// `client_id` of access tokens: the app they are issued to.
    public var clientId: String = "touchstone"
    /// How long an access token lives.
    public var accessTokenLifetime: Duration = .seconds(300)
    /// What new signing keys are.
    public var algorithm: TokenSigningAlgorithm = .es256
    /// A new signing key starts signing this long after the current one did.
    public var rotationInterval: Duration = .seconds(30 * 86_400)
    /// A new key is published this long before it signs anything, so caches of the key set know it first. At least
    /// ``jwksMaxAge``.
    public var publicationLead: Duration = .seconds(3600)
    /// How long a retired key stays published for the confirmation receipts it signed (which do not expire), so a
    /// backend that checks a receipt later still finds its key. `0` publishes retired keys only while access tokens
    /// they signed may live.
    public var receiptKeyRetention: Duration = .seconds(7 * 86_400)
    /// `Cache-Control: max-age` of `/.well-known/jwks.json`.
    public var jwksMaxAge: Duration = .seconds(300)
    /// The 32-byte key that seals the signing keys at rest. `nil`: a file beside an SQLite database (created on first
    /// start), a random key for an in-memory database; PostgreSQL requires one.
    public var keyEncryptionKey: [UInt8]?

    public init() {}

    /// The issuer for a server on `port`.
    public func resolvedIssuer(port: Int) -> String {
        self.issuer ?? "http://localhost:\(port)"
    }

    /// The audiences for a server on `port`.
    public func resolvedAudiences(port: Int) -> [String] {
        self.audiences.isEmpty ? [self.resolvedIssuer(port: port)] : self.audiences
    }

    /// The audiences of confirmation receipts for a server on `port`.
    public func resolvedReceiptAudiences(port: Int) -> [String] {
        self.receiptAudiences.isEmpty ? [self.resolvedIssuer(port: port)] : self.receiptAudiences
    }

    /// Reads the token variables from `environment` over these settings.
    mutating func read(_ environment: [String: String]) throws {
        if let issuer = environment["TOUCHSTONE_ISSUER"] {
            guard let url = URL(string: issuer), let scheme = url.scheme, ["https", "http"].contains(scheme), url.host != nil else {
                throw ConfigurationError("TOUCHSTONE_ISSUER", issuer)
            }
            self.issuer = issuer
        }
        if let list = environment["TOUCHSTONE_TOKEN_AUDIENCE"] {
            self.audiences = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        if let list = environment["TOUCHSTONE_RECEIPT_AUDIENCE"] {
            self.receiptAudiences = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        if let clientId = environment["TOUCHSTONE_TOKEN_CLIENT_ID"] {
            guard !clientId.isEmpty, clientId.utf8.count <= 200 else { throw ConfigurationError("TOUCHSTONE_TOKEN_CLIENT_ID", clientId) }
            self.clientId = clientId
        }
        if let value = environment["TOUCHSTONE_ACCESS_TOKEN_TTL_SECONDS"] {
            guard let seconds = Int(value), (10...86_400).contains(seconds) else {
                throw ConfigurationError("TOUCHSTONE_ACCESS_TOKEN_TTL_SECONDS", value)
            }
            self.accessTokenLifetime = .seconds(seconds)
        }
        if let value = environment["TOUCHSTONE_TOKEN_ALGORITHM"] {
            guard let algorithm = TokenSigningAlgorithm(rawValue: value) else { throw ConfigurationError("TOUCHSTONE_TOKEN_ALGORITHM", value) }
            self.algorithm = algorithm
        }
        if let value = environment["TOUCHSTONE_SIGNING_KEY_ROTATION_DAYS"] {
            guard let days = Int(value), (1...3650).contains(days) else {
                throw ConfigurationError("TOUCHSTONE_SIGNING_KEY_ROTATION_DAYS", value)
            }
            self.rotationInterval = .seconds(days * 86_400)
        }
        if let value = environment["TOUCHSTONE_SIGNING_KEY_LEAD_SECONDS"] {
            guard let seconds = Int(value), (0...30 * 86_400).contains(seconds) else {
                throw ConfigurationError("TOUCHSTONE_SIGNING_KEY_LEAD_SECONDS", value)
            }
            self.publicationLead = .seconds(seconds)
        }
        if let value = environment["TOUCHSTONE_RECEIPT_KEY_RETENTION_DAYS"] {
            guard let days = Int(value), (0...3650).contains(days) else {
                throw ConfigurationError("TOUCHSTONE_RECEIPT_KEY_RETENTION_DAYS", value)
            }
            self.receiptKeyRetention = .seconds(days * 86_400)
        }
        if let value = environment["TOUCHSTONE_JWKS_MAX_AGE_SECONDS"] {
            guard let seconds = Int(value), (0...86_400).contains(seconds) else {
                throw ConfigurationError("TOUCHSTONE_JWKS_MAX_AGE_SECONDS", value)
            }
            self.jwksMaxAge = .seconds(seconds)
        }
        if self.publicationLead < self.jwksMaxAge {
            throw ConfigurationError(
                "TOUCHSTONE_SIGNING_KEY_LEAD_SECONDS",
                "\(self.publicationLead.components.seconds) (less than the JWKS max-age of \(self.jwksMaxAge.components.seconds) s: caches would not see a new key before it signs)"
            )
        }
        if let text = environment["TOUCHSTONE_KEY_ENCRYPTION_KEY"] {
            self.keyEncryptionKey = try Self.parseKeyEncryptionKey(text, setting: "TOUCHSTONE_KEY_ENCRYPTION_KEY")
        } else if let path = environment["TOUCHSTONE_KEY_ENCRYPTION_KEY_FILE"] {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ConfigurationError("TOUCHSTONE_KEY_ENCRYPTION_KEY_FILE", "\(path) (cannot be read)")
            }
            self.keyEncryptionKey = try Self.parseKeyEncryptionKey(text, setting: "TOUCHSTONE_KEY_ENCRYPTION_KEY_FILE")
        }
    }

    /// 32 bytes in base64 (as `openssl rand -base64 32` prints them) or base64url; surrounding white space is ignored.
    /// The value itself never appears in the error.
    static func parseKeyEncryptionKey(_ text: String, setting: String) throws -> [UInt8] {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let standard = trimmed.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let padded = standard + String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: padded), data.count == 32 else {
            throw ConfigurationError(setting, "(hidden: not 32 bytes in base64; make one with `openssl rand -base64 32`)")
        }
        return Array(data)
    }
}
