/// An authentication request of OpenID Connect Client-Initiated Backchannel Authentication (CIBA Core 1.0 §7.1), as
/// this provider accepts it: poll mode, the user named by `login_hint` (an email address or a user id), an optional
/// `binding_message` the phone shows, and an optional `requested_expiry`.
///
/// Client authentication and the user's existence are checked by the caller; this checks the parameters, in the
/// order of §7.1 and §13.
public struct BackchannelAuthenticationRequest: Sendable, Hashable {
    /// The grant type the client polls the token endpoint with (§10.1).
    public static let grantType = "urn:openid:params:grant-type:ciba"
    /// The longest binding message, in characters: what a phone shows on one line.
    public static let maximumBindingMessageLength = 60

    public var scopes: [String]
    public var loginHint: String
    public var bindingMessage: String?
    /// Seconds, when the client asked for a lifetime.
    public var requestedExpiry: Int?

    /// Reads the request.
    ///
    /// - Parameter expiries: the lifetimes the provider grants, in seconds.
    /// - Throws: `invalid_request` (a missing or unsupported hint, a malformed expiry, a `user_code`),
    ///   `invalid_scope` (no `openid`, unknown scopes), `invalid_binding_message`.
    public init(_ parameters: FormParameters, expiries: ClosedRange<Int>) throws(OpenIDError) {
        // Step 1: the scope, which must ask for an ID token.
        let scopes = try Scopes.parse(try parameters.required("scope"))
        guard scopes.contains("openid") else { throw .invalidScope("a backchannel request's scope must contain openid") }
        self.scopes = scopes
        // Step 2: exactly one hint; this provider takes login_hint (id_token_hint and login_hint_token are not supported).
        for unsupported in ["id_token_hint", "login_hint_token"] where try parameters.single(unsupported) != nil {
            throw .invalidRequest("'\(unsupported)' is not supported: name the user with login_hint (an email address or user id)")
        }
        guard let hint = try parameters.single("login_hint") else { throw .invalidRequest("parameter 'login_hint' is missing") }
        guard hint.utf8.count <= 254, hint.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
            throw .invalidRequest("login_hint is too long or has control characters")
        }
        self.loginHint = hint
        // Step 3: no user code (backchannel_user_code_parameter_supported is false).
        if try parameters.single("user_code") != nil {
            throw .invalidRequest("user_code is not supported (backchannel_user_code_parameter_supported is false)")
        }
        // Step 4: the binding message, shown on the phone.
        if let message = try parameters.single("binding_message") {
            guard message.count <= Self.maximumBindingMessageLength else {
                throw .invalidBindingMessage("binding_message is longer than \(Self.maximumBindingMessageLength) characters")
            }
            guard message.unicodeScalars.allSatisfy({ !($0.properties.generalCategory == .control || $0.properties.generalCategory == .format) })
            else {
                throw .invalidBindingMessage("binding_message has control or formatting characters")
            }
            self.bindingMessage = message
        }
        // Step 5: the requested lifetime.
        if let text = try parameters.single("requested_expiry") {
            guard text.utf8.count <= 6, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let seconds = Int(text), expiries.contains(seconds)
            else {
                throw .invalidRequest("requested_expiry must be a whole number of seconds from \(expiries.lowerBound) to \(expiries.upperBound)")
            }
            self.requestedExpiry = seconds
        }
    }
}
