public import Foundation

/// An OpenID Connect / OAuth client registered with the provider (`touchstone clients create`).
public struct OAuthClientRecord: Sendable, Hashable {
    /// The `client_id`.
    public var id: String
    public var name: String
    /// SHA-256 of the client secret (hex), for a confidential client; nil for a public one. The secret itself is
    /// never stored.
    public var secretHash: String?
    /// Registered redirect URIs, compared as strings at authorization.
    public var redirectURIs: [String]
    /// Where RP-initiated logout may send the browser back to.
    public var postLogoutRedirectURIs: [String]
    /// Where back-channel logout tokens are posted.
    public var backchannelLogoutURI: String?
    /// A first-party client skips the consent page.
    public var firstParty: Bool
    public var createdAt: Date
    /// When the secret was last replaced (nil: never).
    public var secretRotatedAt: Date?
    /// May start sign-ins approved on a phone from its backend (OpenID CIBA, `touchstone clients create --ciba`).
    public var ciba = false
    /// Gets tokens only with a DPoP proof (RFC 9449 §5.2 `dpop_bound_access_tokens`; `touchstone clients create --dpop`).
    public var dpopBoundAccessTokens = false

    /// A public client (a native app or a single-page app) has no secret and authenticates with PKCE alone.
    public var isPublic: Bool { self.secretHash == nil }

    public init(
        id: String,
        name: String,
        secretHash: String?,
        redirectURIs: [String],
        postLogoutRedirectURIs: [String] = [],
        backchannelLogoutURI: String? = nil,
        firstParty: Bool = false,
        createdAt: Date,
        secretRotatedAt: Date? = nil
    ) {
        self.id = id
        self.name = name
        self.secretHash = secretHash
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.backchannelLogoutURI = backchannelLogoutURI
        self.firstParty = firstParty
        self.createdAt = createdAt
        self.secretRotatedAt = secretRotatedAt
    }
}
