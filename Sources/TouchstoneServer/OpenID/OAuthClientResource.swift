public import TouchstoneStore

/// A client as the admin API answers it and `touchstone clients` prints it (issue #31, §1): never a secret but the
/// one just made.
public struct OAuthClientResource: Encodable, Sendable {
    var clientId: String
    var clientSecret: String?
    var name: String
    var redirectUris: [String]
    var postLogoutRedirectUris: [String]
    var backchannelLogoutUri: String?
    var `public`: Bool
    var firstParty: Bool
    var ciba: Bool
    var dpopBoundAccessTokens: Bool
    var createdAt: String

    public init(_ record: OAuthClientRecord, secret: String? = nil) {
        self.clientId = record.id
        self.clientSecret = secret
        self.name = record.name
        self.redirectUris = record.redirectURIs
        self.postLogoutRedirectUris = record.postLogoutRedirectURIs
        self.backchannelLogoutUri = record.backchannelLogoutURI
        self.public = record.isPublic
        self.firstParty = record.firstParty
        self.ciba = record.ciba
        self.dpopBoundAccessTokens = record.dpopBoundAccessTokens
        self.createdAt = record.createdAt.rfc3339
    }

    enum CodingKeys: String, CodingKey {
        case clientId, clientSecret, name, redirectUris, postLogoutRedirectUris, backchannelLogoutUri, `public`, firstParty, ciba, dpopBoundAccessTokens, createdAt
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.clientId, forKey: .clientId)
        try container.encodeIfPresent(self.clientSecret, forKey: .clientSecret)
        try container.encode(self.name, forKey: .name)
        try container.encode(self.redirectUris, forKey: .redirectUris)
        try container.encode(self.postLogoutRedirectUris, forKey: .postLogoutRedirectUris)
        try container.encode(self.backchannelLogoutUri, forKey: .backchannelLogoutUri)
        try container.encode(self.public, forKey: .public)
        try container.encode(self.firstParty, forKey: .firstParty)
        try container.encode(self.ciba, forKey: .ciba)
        try container.encode(self.dpopBoundAccessTokens, forKey: .dpopBoundAccessTokens)
        try container.encode(self.createdAt, forKey: .createdAt)
    }
}
