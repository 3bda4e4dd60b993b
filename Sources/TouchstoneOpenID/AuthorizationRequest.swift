/// A validated authorization request (OpenID Connect Core §3.1.2.1, OAuth 2.1): the authorization code flow with
/// PKCE (S256) for every client.
///
/// Validation is in two steps, as RFC 6749 §4.1.2.1 requires: ``target(of:)`` finds the client and the redirect URI;
/// an error there is shown to the user and never redirected. Once the client's registered redirect URIs confirm the
/// target, ``init(_:clientId:redirectURI:)`` checks the rest; its errors are sent back to the redirect URI.
public struct AuthorizationRequest: Sendable, Hashable {
    public let clientId: String
    /// As sent (and as the token request must send it again).
    public let redirectURI: String
    /// The requested scopes, in order, without repeats.
    public let scopes: [String]
    public let state: String?
    public let nonce: String?
    /// The PKCE challenge (S256).
    public let codeChallenge: String
    public let prompt: Set<Prompt>
    /// `max_age` in seconds.
    public let maxAge: Int?
    /// `acr_values` in order of preference; values other than ``ACR/supported`` are kept and ignored.
    public let acrValues: [String]
    public let loginHint: String?
    /// `dpop_jkt` (RFC 9449 §10): the JWK thumbprint of the DPoP key the code is bound to; the token request must
    /// carry a proof from that key.
    public let dpopThumbprint: String?

    /// The `prompt` values the provider supports (OpenID Connect Core §3.1.2.1; `create` from Initiating User
    /// Registration via OpenID Connect 1.0: the page opens at account creation).
    public enum Prompt: String, Sendable, Hashable, CaseIterable {
        case none, login, consent
        case selectAccount = "select_account"
        case create
    }

    /// The longest `state`, `nonce` and `login_hint` accepted.
    public static let maximumStateLength = 2048
    public static let maximumNonceLength = 512
    public static let maximumLoginHintLength = 254
    public static let maximumClientIdLength = 200

    /// The client and redirect URI an authorization request names, before anything else is checked.
    ///
    /// - Returns: the pair, or a reason to show on an error page (never to redirect with): a missing, repeated or
    ///   malformed `client_id` or `redirect_uri`.
    public static func target(of parameters: FormParameters) -> Result<(clientId: String, redirectURI: String), OpenIDError> {
        do throws(OpenIDError) {
            let clientId = try parameters.required("client_id")
            guard clientId.utf8.count <= Self.maximumClientIdLength else { throw .invalidRequest("parameter 'client_id' is too long") }
            let redirectURI = try parameters.required("redirect_uri")
            guard redirectURI.utf8.count <= RedirectURI.maximumLength else { throw .invalidRequest("parameter 'redirect_uri' is too long") }
            return .success((clientId, redirectURI))
        } catch {
            return .failure(error)
        }
    }

    /// Checks the rest of a request whose client and redirect URI are confirmed.
    ///
    /// - Throws: the error to send back to the redirect URI: `invalid_request` (a missing, repeated or malformed
    ///   parameter, no PKCE, `plain`, a challenge without its method), `unsupported_response_type`, `invalid_scope`,
    ///   `request_not_supported`, `request_uri_not_supported`.
    public init(_ parameters: FormParameters, clientId: String, redirectURI: String) throws(OpenIDError) {
        self.clientId = clientId
        self.redirectURI = redirectURI
        // Each parameter once (RFC 6749 §3.1), whatever else is wrong.
        for name in ["response_type", "scope", "state", "nonce", "code_challenge", "code_challenge_method", "prompt", "max_age",
            "acr_values", "login_hint", "response_mode", "request", "request_uri", "dpop_jkt"]
        {
            _ = try parameters.single(name)
        }
        if try parameters.single("request") != nil { throw .requestNotSupported("request objects are not supported") }
        if try parameters.single("request_uri") != nil { throw .requestURINotSupported("request_uri is not supported") }
        guard let responseType = try parameters.single("response_type") else {
            throw .invalidRequest("parameter 'response_type' is missing")
        }
        guard responseType == "code" else { throw .unsupportedResponseType("only response_type=code is supported") }
        if let mode = try parameters.single("response_mode"), mode != "query" {
            throw .invalidRequest("only response_mode=query is supported")
        }
        let state = try parameters.single("state")
        if let state, state.utf8.count > Self.maximumStateLength {
            throw .invalidRequest("parameter 'state' is longer than \(Self.maximumStateLength) bytes")
        }
        self.state = state
        // PKCE, S256 only, for every client (OAuth 2.1 §4.1.1, RFC 9700 §2.1.1).
        let challenge = try parameters.single("code_challenge")
        let method = try parameters.single("code_challenge_method")
        guard let challenge else {
            throw .invalidRequest(method == nil ? "PKCE is required: send code_challenge and code_challenge_method=S256"
                : "code_challenge_method without code_challenge")
        }
        guard let method else { throw .invalidRequest("code_challenge_method is required (S256)") }
        guard method == PKCE.method else { throw .invalidRequest("code_challenge_method must be S256 ('\(method.prefix(20))' is not supported)") }
        guard PKCE.isValidChallenge(challenge) else {
            throw .invalidRequest("code_challenge must be the base64url SHA-256 of a verifier (43 characters)")
        }
        self.codeChallenge = challenge
        guard let scope = try parameters.single("scope") else { throw .invalidRequest("parameter 'scope' is missing") }
        self.scopes = try Scopes.parse(scope)
        let nonce = try parameters.single("nonce")
        if let nonce, nonce.utf8.count > Self.maximumNonceLength {
            throw .invalidRequest("parameter 'nonce' is longer than \(Self.maximumNonceLength) bytes")
        }
        self.nonce = nonce
        var prompt: Set<Prompt> = []
        if let text = try parameters.single("prompt") {
            for word in text.split(separator: " ") {
                guard let value = Prompt(rawValue: String(word)) else { throw .invalidRequest("unknown prompt value '\(word.prefix(20))'") }
                prompt.insert(value)
            }
            if prompt.contains(.none) && prompt.count > 1 { throw .invalidRequest("prompt=none cannot be combined with other values") }
        }
        self.prompt = prompt
        if let text = try parameters.single("max_age") {
            guard text.utf8.count <= 10, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = Int(text) else {
                throw .invalidRequest("max_age must be a non-negative integer of seconds")
            }
            self.maxAge = value
        } else {
            self.maxAge = nil
        }
        self.acrValues = try parameters.single("acr_values").map { $0.split(separator: " ").map(String.init) } ?? []
        let hint = try parameters.single("login_hint")
        if let hint, hint.utf8.count > Self.maximumLoginHintLength {
            throw .invalidRequest("parameter 'login_hint' is longer than \(Self.maximumLoginHintLength) bytes")
        }
        self.loginHint = hint
        let thumbprint = try parameters.single("dpop_jkt")
        if let thumbprint, !Self.isThumbprint(thumbprint) {
            throw .invalidRequest("dpop_jkt must be a JWK SHA-256 thumbprint (43 base64url characters)")
        }
        self.dpopThumbprint = thumbprint
    }

    /// A SHA-256 JWK thumbprint as RFC 7638 writes it: 43 base64url characters, the last a canonical one.
    static func isThumbprint(_ text: String) -> Bool {
        // The same shape as a PKCE S256 challenge: 32 bytes, base64url without padding.
        PKCE.isValidChallenge(text)
    }

    /// Whether the request is OpenID Connect (and so gets an ID token).
    public var isOpenID: Bool { self.scopes.contains("openid") }

    /// The ACR the request insists on, if any: ``ACR/phrh`` when it asks only for a device-bound passkey, ``ACR/phr``
    /// when it accepts any passkey.
    public var requiredACR: ACR? {
        let known = self.acrValues.compactMap(ACR.init(rawValue:))
        if known.contains(.phr) { return .phr }
        return known.first
    }
}

/// The authentication context classes Touchstone reports and enforces (OpenID Extended Authentication Profile ACR
/// values).
public enum ACR: String, Sendable, Hashable, CaseIterable {
    /// Phishing-resistant: a passkey sign-in.
    case phr
    /// Phishing-resistant and hardware-protected: a device-bound passkey (not backup eligible).
    case phrh

    public static let supported: [String] = ACR.allCases.map(\.rawValue)

    /// Whether a sign-in that reached `achieved` meets this class (`phrh` meets `phr`).
    public func isMet(by achieved: String?) -> Bool {
        switch self {
        case .phr: achieved == ACR.phr.rawValue || achieved == ACR.phrh.rawValue
        case .phrh: achieved == ACR.phrh.rawValue
        }
    }
}
