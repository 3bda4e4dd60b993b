import Foundation
import HTTPTypes
import Hummingbird
import Mustache

/// The provider's HTML pages (sign-in, consent, errors, signed out), rendered from the Mustache templates in
/// `Resources/oidc/` (values escaped by Mustache), and its one script.
struct OpenIDPages: Sendable {
    private let library: MustacheLibrary
    let script: ByteBuffer
    let productName: String

    init(productName: String) {
        var library = MustacheLibrary()
        for name in ["signin", "consent", "message"] {
            guard let url = Bundle.module.url(forResource: name, withExtension: "mustache", subdirectory: "oidc"),
                let text = try? String(contentsOf: url, encoding: .utf8),
                let template = try? MustacheTemplate(string: text)
            else {
                preconditionFailure("the OpenID page template \(name).mustache is missing from the package's resources")
            }
            library.register(template, named: name)
        }
        self.library = library
        let script = Bundle.module.url(forResource: "signin", withExtension: "js", subdirectory: "oidc").flatMap { try? Data(contentsOf: $0) }
        self.script = ByteBuffer(bytes: script ?? Data())
        self.productName = productName
    }

    /// Headers of every page: never cached, never framed (clickjacking), scripts and styles from this origin only.
    static let headers: HTTPFields = [
        .contentType: "text/html; charset=utf-8",
        .cacheControl: "no-store",
        .contentSecurityPolicy:
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'",
        .init("X-Frame-Options")!: "DENY",
        .init("Referrer-Policy")!: "no-referrer",
        .init("X-Content-Type-Options")!: "nosniff",
    ]

    struct Parameter {
        var name: String
        var value: String
    }

    struct SignIn {
        var productName: String
        var clientName: String
        /// For the phone sign-in, which names the client the phone shows.
        var clientId: String
        var parameters: [Parameter]
        var csrf: String
        var loginHint: String
        var message: String?
        var passkeyOnly: Bool
        var deviceBound: Bool
        /// `TOUCHSTONE_SIGN_UP`: whether the page offers to create an account; `createOpen` (`prompt=create`, or after
        /// a failed sign-up) opens that part.
        var signUp: Bool = false
        var createOpen: Bool = false
        /// The ways in without a password (a mailed code, a recovery code, a reset), and what was mailed already.
        var emailCodes: Bool = false
        var otherOpen: Bool = false
        var codeSentTo: String?
        var resetSentTo: String?
    }

    struct Consent {
        var productName: String
        var clientName: String
        var email: String
        var scopes: [String]
        var parameters: [Parameter]
        var csrf: String
        var loginProof: String?
    }

    struct Message {
        var productName: String
        var title: String
        var message: String
        var isError: Bool
    }

    func signIn(_ page: SignIn, status: HTTPResponse.Status = .ok, cookies: [String] = []) -> Response {
        self.response(self.library.render(page, withTemplate: "signin") ?? "", status: status, cookies: cookies)
    }

    func consent(_ page: Consent, cookies: [String] = []) -> Response {
        self.response(self.library.render(page, withTemplate: "consent") ?? "", status: .ok, cookies: cookies)
    }

    func message(title: String, _ message: String, status: HTTPResponse.Status, isError: Bool = true, cookies: [String] = []) -> Response {
        let page = Message(productName: self.productName, title: title, message: message, isError: isError)
        return self.response(self.library.render(page, withTemplate: "message") ?? "", status: status, cookies: cookies)
    }

    private func response(_ html: String, status: HTTPResponse.Status, cookies: [String]) -> Response {
        var headers = Self.headers
        for cookie in cookies { headers.append(HTTPField(name: .setCookie, value: cookie)) }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}
