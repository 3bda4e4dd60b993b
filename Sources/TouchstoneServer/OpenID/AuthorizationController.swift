import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import TouchstoneCrypto
import TouchstoneOpenID
import TouchstoneStore
import TouchstoneWebAuthn

/// `GET` and `POST /oauth2/authorize`: the authorization code flow with PKCE (OpenID Connect Core §3.1), with the
/// provider's own sign-in and consent pages.
///
/// The pages carry the authorization request in hidden fields and post back here with an `action` (`sign_in`,
/// `passkey`, `consent`), so every step checks the whole request again and nothing is kept between steps but the
/// browser's session and CSRF cookies.
struct AuthorizationController {
    typealias Context = TouchstoneRequestContext

    let provider: OpenIDProvider
    let sessions: SessionManager
    let passwords: PasswordSignIn
    let passkeys: PasskeyService
    let limiter: RateLimiter
    let cookies: BrowserCookies
    let pages: OpenIDPages
    /// Creating an account on the sign-in page (`TOUCHSTONE_SIGN_UP`; `prompt=create`).
    let signUp: PasswordSignUp
    let signUpEnabled: Bool
    /// Mailed codes, recovery codes and resets on the sign-in page.
    let recovery: RecoveryService

    /// The authorization request's parameters that the pages carry from step to step.
    static let carried = [
        "response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method", "prompt",
        "max_age", "acr_values", "login_hint", "response_mode", "dpop_jkt",
    ]

    func addRoutes(to router: Router<Context>) {
        router.get("/oauth2/authorize", use: self.authorize)
        router.post("/oauth2/authorize", use: self.authorize)
        router.get("/oauth2/assets/signin.js") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "public, max-age=300"],
                body: ResponseBody(byteBuffer: self.pages.script)
            )
        }
    }

    /// What the browser brought: its session (if live), its CSRF cookie, and cookies to set on the answer.
    struct Browser {
        var identity: AuthenticatedSession?
        var csrf: String
        var setCookies: [String] = []
        /// The session was signed in (or again) during this request, or a consent form proves it was in this flow.
        var freshSignIn = false
    }

    @Sendable func authorize(request: Request, context: Context) async throws -> Response {
        // An unauthenticated route: limited per client address like the others (429 `rate_limited`).
        try await self.limiter.checkAddress("oidc", client: context.client)
        // 1. The parameters: the query for GET, the form for POST.
        let parameters: FormParameters
        do {
            if request.method == .post {
                guard request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else {
                    return self.pages.message(title: "Sign-in error", "The authorization request must be a form.", status: .badRequest)
                }
                parameters = try FormParameters(urlEncoded: try await request.collectFormBody(context: context))
            } else {
                parameters = try FormParameters(urlEncoded: request.uri.query ?? "")
            }
        } catch let error as OpenIDError {
            return self.pages.message(title: "Sign-in error", "The request is malformed: \(error.reason).", status: .badRequest)
        }
        // 2. The client and its redirect URI: problems here are shown, never redirected (RFC 6749 §4.1.2.1).
        let target: (clientId: String, redirectURI: String)
        switch AuthorizationRequest.target(of: parameters) {
        case .success(let value): target = value
        case .failure(let error):
            return self.pages.message(title: "Sign-in error", "The app's sign-in request is invalid: \(error.reason).", status: .badRequest)
        }
        guard let client = try await self.provider.store.client(id: target.clientId) else {
            return self.pages.message(title: "Sign-in error", "The app asking you to sign in is not registered here (unknown client_id).",
                status: .badRequest)
        }
        // Exact first (the usual case, no parsing); then RFC 8252's loopback port rule.
        guard client.redirectURIs.contains(target.redirectURI)
            || client.redirectURIs.contains(where: { (try? RedirectURI(validating: $0))?.matches(target.redirectURI) == true })
        else {
            return self.pages.message(title: "Sign-in error",
                "The app's redirect_uri is not one registered for \(client.name); the sign-in stops here.", status: .badRequest)
        }
        // 3. The rest of the request: errors go back to the client.
        let authorization: AuthorizationRequest
        do {
            authorization = try AuthorizationRequest(parameters, clientId: client.id, redirectURI: target.redirectURI)
        } catch {
            return self.redirect(target.redirectURI, error: error, state: try? parameters.single("state"))
        }
        var browser = try await self.browser(request)
        // 4. A step of the pages: CSRF first.
        let action = try? parameters.single("action")
        if let action {
            guard request.method == .post,
                let sent = try? parameters.single("csrf_token"), self.cookies.value(self.cookies.csrfName, in: request) != nil,
                ConstantTime.equal(Array(sent.utf8), Array(browser.csrf.utf8))
            else {
                return self.pages.message(title: "Sign-in error",
                    "This form has expired or did not come from this site. Go back to the app and sign in again.", status: .forbidden,
                    cookies: browser.setCookies)
            }
            switch action {
            case "sign_up", "passkey_sign_up", "email_code_request", "email_code", "recovery_code", "reset_request", "reset":
                if let page = try await self.accountAction(action, parameters: parameters, client: client, authorization: authorization,
                    browser: &browser, context: context)
                {
                    return page
                }
            case "sign_in", "passkey", "phone":
                if let page = try await self.signIn(action: action, parameters: parameters, client: client, authorization: authorization,
                    browser: &browser, context: context)
                {
                    return page
                }
            case "consent":
                if let identity = browser.identity, let proof = try? parameters.single("login_proof"),
                    ConstantTime.equal(Array(proof.utf8), Array(self.loginProof(identity, csrf: browser.csrf).utf8))
                {
                    browser.freshSignIn = true
                }
            default:
                return self.pages.message(title: "Sign-in error", "Unknown form action.", status: .badRequest, cookies: browser.setCookies)
            }
        }
        return try await self.decide(authorization, client: client, parameters: parameters, action: action, browser: browser)
    }

    // MARK: Deciding

    private func decide(
        _ authorization: AuthorizationRequest,
        client: OAuthClientRecord,
        parameters: FormParameters,
        action: String?,
        browser: Browser
    ) async throws -> Response {
        let now = self.provider.now()
        // Sign-in: none yet, `prompt=login`, an exceeded max_age, or an ACR the session does not meet.
        var needsSignIn = browser.identity == nil
        if let identity = browser.identity, !browser.freshSignIn {
            if authorization.prompt.contains(.login) || authorization.prompt.contains(.create) { needsSignIn = true }
            if let maxAge = authorization.maxAge, now.timeIntervalSince(identity.session.authenticatedAt) > TimeInterval(maxAge) {
                needsSignIn = true
            }
        }
        let required = authorization.requiredACR
        if let identity = browser.identity, let required, !required.isMet(by: identity.session.acr) {
            guard try await self.hasPasskey(meeting: required, userId: identity.user.id) else {
                return self.redirect(authorization, error: .accessDenied(
                    required == .phrh ? "the account has no device-bound passkey (acr phrh)" : "the account has no passkey (acr phr)"),
                    cookies: browser.setCookies)
            }
            needsSignIn = true
        }
        if needsSignIn {
            if authorization.prompt.contains(.none) {
                return self.redirect(authorization, error: .loginRequired("the user must sign in"), cookies: browser.setCookies)
            }
            var message: String?
            if browser.freshSignIn, let required {
                message = required == .phrh ? "Sign in with a passkey kept on this device (a synced passkey is not enough here)."
                    : "Sign in with a passkey."
            }
            return self.signInPage(authorization, client: client, parameters: parameters, browser: browser, message: message,
                status: message == nil ? .ok : .unauthorized)
        }
        guard let identity = browser.identity else { preconditionFailure("a sign-in was needed") }
        // Consent, for a third-party client: remembered per user, client and scopes.
        if !client.firstParty {
            let consent = try await self.provider.store.consent(userId: identity.user.id, clientId: client.id)
            let decision = action == "consent" ? try? parameters.single("decision") : nil
            if decision == "deny" {
                try await self.provider.audit.record(.consentDenied, .info, userId: identity.user.id, reason: "client \(client.id)")
                return self.redirect(authorization, error: .accessDenied("the user denied the request"), cookies: browser.setCookies)
            }
            if decision == "allow" {
                let scopes = (consent?.scopes ?? []) + authorization.scopes.filter { !(consent?.scopes ?? []).contains($0) }
                let record = OAuthConsentRecord(userId: identity.user.id, clientId: client.id, scopes: scopes, grantedAt: now)
                let event = self.provider.audit.event(.consentGranted, userId: identity.user.id,
                    reason: "client \(client.id) scope \(authorization.scopes.joined(separator: " "))")
                // The consent and its event commit together.
                try await self.provider.store.unitOfWork { tx in
                    try await tx.upsertConsent(record)
                    try await tx.insertAuditEvent(event)
                }
                self.provider.audit.committed([event])
            } else {
                let covered = consent.map { Set(authorization.scopes).isSubset(of: $0.scopes) } ?? false
                if !covered || authorization.prompt.contains(.consent) {
                    if authorization.prompt.contains(.none) {
                        return self.redirect(authorization, error: .consentRequired("the user has not allowed this client"),
                            cookies: browser.setCookies)
                    }
                    return self.pages.consent(
                        OpenIDPages.Consent(
                            productName: self.pages.productName,
                            clientName: client.name,
                            email: identity.user.email,
                            scopes: authorization.scopes.map(Self.describe),
                            parameters: Self.carriedParameters(parameters),
                            csrf: browser.csrf,
                            loginProof: browser.freshSignIn ? self.loginProof(identity, csrf: browser.csrf) : nil
                        ),
                        cookies: browser.setCookies
                    )
                }
            }
        }
        // The code.
        let code = self.provider.secrets.newToken()
        let sessionId = try await self.provider.sessionId(of: identity.session)
        var record = AuthorizationCodeRecord(
            codeHash: Secrets.hash(token: code),
            clientId: client.id,
            userId: identity.user.id,
            sessionId: sessionId,
            redirectURI: authorization.redirectURI,
            codeChallenge: authorization.codeChallenge,
            nonce: authorization.nonce,
            scope: authorization.scopes.joined(separator: " "),
            authTime: identity.session.authenticatedAt,
            amr: TokenService.authenticationMethodReferences(identity.session.methods),
            acr: identity.session.acr,
            familyId: self.provider.secrets.newIdentifier(),
            createdAt: now,
            expiresAt: now.addingTimeInterval(OpenIDProvider.codeLifetime)
        )
        record.dpopThumbprint = authorization.dpopThumbprint
        try await self.provider.store.insertAuthorizationCode(record)
        let location = Self.location(authorization.redirectURI, [("code", code), ("state", authorization.state), ("iss", self.provider.issuer)])
        return self.found(location, cookies: browser.setCookies)
    }

    private func hasPasskey(meeting acr: ACR, userId: String) async throws -> Bool {
        try await self.provider.store.passkeys(userId: userId).contains { acr == .phr || !$0.backupEligible }
    }

    // MARK: Signing in

    /// Signs the browser in from the page's form; nil when it worked (the flow continues), or the page to show.
    func signIn(
        action: String,
        parameters: FormParameters,
        client: OAuthClientRecord,
        authorization: AuthorizationRequest,
        browser: inout Browser,
        context: Context
    ) async throws -> Response? {
        let current = browser.identity
        do {
            if action == "sign_in" {
                try await self.limiter.checkAddress("password", client: context.client)
                let (email, password) = try Self.credentials(parameters)
                let sessions = self.sessions
                let token = try await self.passwords.signIn(email: email, password: password, client: context.client) { user, tx in
                    let now = self.provider.now()
                    if let current, current.user.id == user.id {
                        // The same account again (prompt=login, max_age): the session keeps its sid, with a new auth_time.
                        _ = try await tx.reauthenticateSession(
                            tokenHash: current.session.tokenHash, at: now, methods: [.password], strongAuthenticatedAt: now, acr: nil)
                        return (current.token, sessionCreated: false)
                    }
                    let (token, session) = sessions.make(for: user, method: .password)
                    try await tx.insertSession(session)
                    return (token, sessionCreated: true)
                }
                try await self.establish(token: token, replacing: current, browser: &browser)
            } else if action == "phone" {
                // The page's script polled the sign-in request the phone approved and got its session: it becomes
                // the browser's if it is a fresh phone-approval session.
                guard let token = try parameters.single("session"), token.utf8.count <= 256 else {
                    throw APIError.invalidRequest("the phone's answer is missing")
                }
                let approved = try await self.sessions.authenticate(token: token)
                guard approved.session.methods == [.phoneApproval],
                    self.provider.now().timeIntervalSince(approved.session.authenticatedAt) <= OpenIDProvider.phoneSessionWindow
                else {
                    throw APIError.unauthenticated("that is not a fresh sign-in approved on your phone")
                }
                try await self.establish(token: token, replacing: current, browser: &browser)
            } else {
                guard let text = try parameters.single("credential"), text.utf8.count <= 16 * 1024 else {
                    throw APIError.invalidRequest("the passkey's answer is missing")
                }
                let response = try Self.credential(text)
                try await self.limiter.checkAccount("credential:\(response.rawId)")
                let (user, token, record) = try await self.passkeys.verifyAuthentication(response)
                if let current, current.user.id == user.id {
                    let now = self.provider.now()
                    _ = try await self.provider.store.reauthenticateSession(
                        tokenHash: current.session.tokenHash, at: now, methods: [.passkey], strongAuthenticatedAt: record.strongAuthenticatedAt, acr: record.acr)
                    // The sign-in's own session is not needed: the browser keeps its session (and sid).
                    _ = try await self.provider.store.revokeSession(tokenHash: record.tokenHash, at: now)
                    try await self.establish(token: current.token, replacing: current, browser: &browser)
                } else {
                    try await self.establish(token: token, replacing: current, browser: &browser)
                }
            }
            return nil
        } catch let error as OpenIDError {
            return self.signInPage(authorization, client: client, parameters: parameters, browser: browser,
                message: "The form is malformed: \(error.reason).", status: .badRequest)
        } catch let error as APIError where error.status != .serviceUnavailable && error.status != .internalServerError {
            let message = switch error.code {
            case "invalid_credentials": "Wrong email or password."
            case "passkey_not_found_for_login": "This passkey is not registered here."
            default: error.message.prefix(1).uppercased() + error.message.dropFirst() + "."
            }
            var page = self.signInPage(authorization, client: client, parameters: parameters, browser: browser, message: message,
                status: error.status)
            for field in error.headers { page.headers.append(field) }
            return page
        }
    }

    /// Puts the signed-in session in the browser (a session of another account that the browser held is signed out).
    func establish(token: String, replacing current: AuthenticatedSession?, browser: inout Browser) async throws {
        if let current, current.token != token {
            _ = try await self.provider.store.revokeSession(tokenHash: current.session.tokenHash, at: self.provider.now())
        }
        let fresh = try await self.sessions.authenticate(token: token)
        browser.identity = fresh
        browser.freshSignIn = true
        let maxAge = Int(fresh.session.expiresAt.timeIntervalSince(self.provider.now()).rounded(.down))
        browser.setCookies.append(self.cookies.setSession(token, maxAge: maxAge))
    }

    func signInPage(
        _ authorization: AuthorizationRequest,
        client: OAuthClientRecord,
        parameters: FormParameters,
        browser: Browser,
        message: String?,
        status: HTTPResponse.Status,
        adjust: (inout OpenIDPages.SignIn) -> Void = { _ in }
    ) -> Response {
        let required = authorization.requiredACR
        var page = OpenIDPages.SignIn(
            productName: self.pages.productName,
            clientName: client.name,
            clientId: client.id,
            parameters: Self.carriedParameters(parameters),
            csrf: browser.csrf,
            loginHint: authorization.loginHint ?? "",
            message: message,
            passkeyOnly: required != nil,
            deviceBound: required == .phrh,
            signUp: self.signUpEnabled && required == nil,
            createOpen: self.signUpEnabled && required == nil && authorization.prompt.contains(.create),
            emailCodes: self.recovery.settings.emailCodes && required == nil
        )
        adjust(&page)
        return self.pages.signIn(page, status: status, cookies: browser.setCookies)
    }

    // MARK: Helpers

    /// The sign-in form's email and password, by the JSON API's rules.
    private static func credentials(_ parameters: FormParameters) throws -> (String, InputRules.Password) {
        do {
            let email = try InputRules.email(try parameters.single("email") ?? "", field: "email")
            let password = try InputRules.password(try parameters.single("password") ?? "", field: "password")
            return (email, password)
        } catch let error as FieldError {
            throw APIError.invalidRequest(error.message)
        }
    }

    /// The passkey's answer the page posted (WebAuthn's JSON form).
    private static func credential(_ text: String) throws -> AuthenticationResponseJSON {
        do {
            return try AuthenticationResponseJSON(json: Array(text.utf8))
        } catch {
            throw APIError.invalidRequest(error.description)
        }
    }

    private func browser(_ request: Request) async throws -> Browser {
        var setCookies: [String] = []
        let csrf: String
        if let value = self.cookies.value(self.cookies.csrfName, in: request), value.utf8.count == 43 {
            csrf = value
        } else {
            csrf = self.provider.secrets.newToken()
            setCookies.append(self.cookies.setCSRF(csrf))
        }
        var identity: AuthenticatedSession?
        if let token = self.cookies.value(self.cookies.sessionName, in: request) {
            do {
                identity = try await self.sessions.authenticate(token: token)
            } catch let error as APIError where error.status == .unauthorized {
                setCookies.append(self.cookies.clearSession())
            }
        }
        return Browser(identity: identity, csrf: csrf, setCookies: setCookies)
    }

    /// Proof, for the consent form, that the browser signed in during this flow (so `prompt=login` is not asked twice):
    /// an HMAC under the browser's CSRF secret of the session's id and sign-in time.
    private func loginProof(_ identity: AuthenticatedSession, csrf: String) -> String {
        let message = "login|\(identity.session.tokenHash)|\(identity.session.authenticatedAt.millis)"
        let mac = HMAC<SHA256>.authenticationCode(for: Array(message.utf8), using: SymmetricKey(data: Array(csrf.utf8)))
        return Base64.urlEncode(Array(mac))
    }

    private static func carriedParameters(_ parameters: FormParameters) -> [OpenIDPages.Parameter] {
        Self.carried.compactMap { name in
            (try? parameters.single(name)).flatMap { $0 }.map { OpenIDPages.Parameter(name: name, value: $0) }
        }
    }

    /// What a scope lets the client do, in the consent page's words.
    static func describe(_ scope: String) -> String {
        switch scope {
        case "openid": "know who you are (your account id)"
        case "email": "see your email address"
        case "profile": "see your name"
        case "offline_access": "stay signed in while you are away (a refresh token)"
        default: scope
        }
    }

    private func redirect(_ authorization: AuthorizationRequest, error: OpenIDError, cookies: [String] = []) -> Response {
        self.redirect(authorization.redirectURI, error: error, state: authorization.state, cookies: cookies)
    }

    /// An error for the client at its (verified) redirect URI, with `iss` (RFC 9207).
    private func redirect(_ redirectURI: String, error: OpenIDError, state: String??, cookies: [String] = []) -> Response {
        let state = state.flatMap { $0 }.flatMap { $0.utf8.count <= AuthorizationRequest.maximumStateLength ? $0 : nil }
        let location = Self.location(redirectURI, [
            ("error", error.code), ("error_description", error.reason), ("state", state), ("iss", self.provider.issuer),
        ])
        return self.found(location, cookies: cookies)
    }

    private func found(_ location: String, cookies: [String]) -> Response {
        var headers: HTTPFields = [.location: location, .cacheControl: "no-store", .init("Referrer-Policy")!: "no-referrer"]
        for cookie in cookies { headers.append(HTTPField(name: .setCookie, value: cookie)) }
        return Response(status: .found, headers: headers)
    }

    /// `base` with the parameters added to its query (form-encoded).
    static func location(_ base: String, _ parameters: [(String, String?)]) -> String {
        var text = base
        var separator = base.contains("?") ? "&" : "?"
        for (name, value) in parameters {
            guard let value else { continue }
            text += separator + name + "=" + FormParameters.encode(value)
            separator = "&"
        }
        return text
    }

}
