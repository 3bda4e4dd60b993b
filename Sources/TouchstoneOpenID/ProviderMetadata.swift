/// The provider's metadata: OpenID Connect Discovery 1.0 §3 and RFC 8414 §2 (one document serves both).
public struct ProviderMetadata: Encodable, Sendable, Hashable {
    public var issuer: String
    public var authorization_endpoint: String
    public var token_endpoint: String
    public var userinfo_endpoint: String
    public var jwks_uri: String
    public var revocation_endpoint: String
    public var introspection_endpoint: String
    public var end_session_endpoint: String
    public var scopes_supported = Scopes.supported
    public var response_types_supported = ["code"]
    public var response_modes_supported = ["query"]
    public var grant_types_supported = ["authorization_code", "refresh_token", BackchannelAuthenticationRequest.grantType]
    public var subject_types_supported = ["public"]
    public var id_token_signing_alg_values_supported: [String]
    public var token_endpoint_auth_methods_supported = ["client_secret_basic", "client_secret_post", "none"]
    public var revocation_endpoint_auth_methods_supported = ["client_secret_basic", "client_secret_post", "none"]
    public var introspection_endpoint_auth_methods_supported = ["client_secret_basic", "client_secret_post"]
    public var code_challenge_methods_supported = [PKCE.method]
    public var claims_supported = [
        "iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "amr", "acr", "sid", "email", "email_verified", "name",
    ]
    public var acr_values_supported = ACR.supported
    public var prompt_values_supported = AuthorizationRequest.Prompt.allCases.map(\.rawValue)
    public var claims_parameter_supported = false
    public var request_parameter_supported = false
    public var request_uri_parameter_supported = false
    public var authorization_response_iss_parameter_supported = true
    public var backchannel_logout_supported = true
    public var backchannel_logout_session_supported = true
    public var frontchannel_logout_supported = false
    /// OpenID CIBA Core 1.0 §4, poll mode only.
    public var backchannel_authentication_endpoint: String
    public var backchannel_token_delivery_modes_supported = ["poll"]
    public var backchannel_user_code_parameter_supported = false
    /// RFC 9449 §5.1: the JWS algorithms accepted in DPoP proofs.
    public var dpop_signing_alg_values_supported = ["ES256", "EdDSA", "PS256", "RS256"]

    /// The document for `issuer` (no trailing slash), whose endpoints live under it, signing with `algorithms`.
    public init(issuer: String, signingAlgorithms: [String]) {
        let base = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        self.issuer = issuer
        self.authorization_endpoint = base + "/oauth2/authorize"
        self.token_endpoint = base + "/oauth2/token"
        self.userinfo_endpoint = base + "/oauth2/userinfo"
        self.jwks_uri = base + "/.well-known/jwks.json"
        self.revocation_endpoint = base + "/oauth2/revoke"
        self.introspection_endpoint = base + "/oauth2/introspect"
        self.end_session_endpoint = base + "/oauth2/logout"
        self.backchannel_authentication_endpoint = base + "/oauth2/bc-authorize"
        self.id_token_signing_alg_values_supported = signingAlgorithms
    }
}
