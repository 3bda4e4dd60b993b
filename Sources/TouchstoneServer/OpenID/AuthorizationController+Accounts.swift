import Foundation
import Hummingbird
import TouchstoneOpenID
import TouchstoneStore

// The sign-in page's ways in besides a password, a passkey and the phone (issue #42): creating an account (with a
// password, or with a passkey made by the page's script), a mailed sign-in code, a recovery code, and a password reset,
// each in this tab, with the authorization request carried in the page's hidden fields so that the flow continues
// where it was once the browser is signed in.
extension AuthorizationController {
    /// Runs the page's account `action`; nil when the browser is now signed in (the flow continues), or the page to show.
    func accountAction(
        _ action: String,
        parameters: FormParameters,
        client: OAuthClientRecord,
        authorization: AuthorizationRequest,
        browser: inout Browser,
        context: Context
    ) async throws -> Response? {
        let current = browser.identity
        do {
            switch action {
            case "sign_up":
                guard self.signUpEnabled else { throw APIError.signUpDisabled }
                try await self.limiter.checkAddress("password", client: context.client)
                let email = try Self.field(parameters, "email") { (text) throws(FieldError) in try InputRules.email(text, field: "email") }
                let password = try Self.field(parameters, "password") { (text) throws(FieldError) in try InputRules.newPassword(text, field: "password") }
                let name = try parameters.single("display_name").flatMap { $0.isEmpty ? nil : $0 }
                let displayName = try name.map { _ in
                    try Self.field(parameters, "display_name") { (text) throws(FieldError) in try InputRules.displayText(text, field: "display_name") }
                }
                let (_, token, _) = try await self.signUp.signUp(email: email, password: password, displayName: displayName)
                try await self.establish(token: token, replacing: current, browser: &browser)
            case "passkey_sign_up":
                // The page's script made the account with a passkey (POST /v1/passkeys/sign-ups/...) and posts its
                // session: it becomes the browser's if it is that fresh passkey sign-up's.
                guard let token = try parameters.single("session"), token.utf8.count <= 256 else {
                    throw APIError.invalidRequest("the new account's session is missing")
                }
                let created = try await self.sessions.authenticate(token: token)
                guard created.session.methods == [.passkey], created.user.passwordHash == nil,
                    self.provider.now().timeIntervalSince(created.session.createdAt) <= OpenIDProvider.phoneSessionWindow
                else {
                    throw APIError.unauthenticated("that is not an account just created with a passkey")
                }
                try await self.establish(token: token, replacing: current, browser: &browser)
            case "email_code_request":
                let email = try Self.field(parameters, "email") { (text) throws(FieldError) in try InputRules.email(text, field: "email") }
                try await self.recovery.requestEmailCode(email: email)
                return self.signInPage(authorization, client: client, parameters: parameters, browser: browser,
                    message: nil, status: .ok) { page in
                    page.otherOpen = true
                    page.codeSentTo = email
                }
            case "email_code":
                let email = try Self.field(parameters, "email") { (text) throws(FieldError) in try InputRules.email(text, field: "email") }
                let code = try Self.field(parameters, "code") { (text) throws(FieldError) in try RecoveryInput.code(text, field: "code") }
                let (_, token, _) = try await self.recovery.verifyEmailCode(email: email, code: code)
                try await self.establish(token: token, replacing: current, browser: &browser)
            case "recovery_code":
                let email = try Self.field(parameters, "email") { (text) throws(FieldError) in try InputRules.email(text, field: "email") }
                let code = try Self.field(parameters, "code") { (text) throws(FieldError) in
                    guard let code = RecoveryCodes.normalize(text) else { throw FieldError(message: "field 'code' must be a recovery code: ten letters and digits, as xxxxx-xxxxx") }
                    return code
                }
                let (_, token, _) = try await self.recovery.verifyRecoveryCode(email: email, code: code, client: context.client)
                try await self.establish(token: token, replacing: current, browser: &browser)
            case "reset_request":
                let email = try Self.field(parameters, "email") { (text) throws(FieldError) in try InputRules.email(text, field: "email") }
                try await self.recovery.requestPasswordReset(email: email)
                return self.signInPage(authorization, client: client, parameters: parameters, browser: browser,
                    message: nil, status: .ok) { page in
                    page.otherOpen = true
                    page.resetSentTo = email
                }
            default:  // "reset"
                let email = try Self.field(parameters, "email") { (text) throws(FieldError) in try InputRules.email(text, field: "email") }
                let code = try Self.field(parameters, "code") { (text) throws(FieldError) in try RecoveryInput.code(text, field: "code") }
                let password = try Self.field(parameters, "new_password") { (text) throws(FieldError) in try InputRules.newPassword(text, field: "new_password") }
                let reset = try await self.recovery.confirmPasswordReset(email: email, code: code, newPassword: password)
                guard let session = reset.session else {
                    // An account with passkeys or device keys signs in again, with one of them or the new password.
                    return self.signInPage(authorization, client: client, parameters: parameters, browser: browser,
                        message: "Your password is set and every session ended. Sign in with it, or with a passkey.", status: .ok)
                }
                try await self.establish(token: session.token, replacing: current, browser: &browser)
            }
            return nil
        } catch let error as OpenIDError {
            return self.signInPage(authorization, client: client, parameters: parameters, browser: browser,
                message: "The form is malformed: \(error.reason).", status: .badRequest) { $0.otherOpen = action != "sign_up" }
        } catch let error as APIError where error.status != .serviceUnavailable && error.status != .internalServerError {
            var page = self.signInPage(authorization, client: client, parameters: parameters, browser: browser,
                message: error.message.prefix(1).uppercased() + error.message.dropFirst() + ".", status: error.status) { page in
                // The part of the page the user was in stays open, with what was mailed.
                if action == "sign_up" || action == "passkey_sign_up" { page.createOpen = page.signUp } else { page.otherOpen = true }
                if action == "email_code" { page.codeSentTo = try? parameters.single("email") ?? nil }
                if action == "reset" { page.resetSentTo = try? parameters.single("email") ?? nil }
            }
            for field in error.headers { page.headers.append(field) }
            return page
        }
    }

    /// A form field through one of the ``InputRules`` (400 `invalid_request` naming it when absent or refused).
    private static func field<T>(_ parameters: FormParameters, _ name: String, _ rule: (String) throws(FieldError) -> T) throws -> T {
        guard let text = try parameters.single(name), !text.isEmpty else { throw APIError.invalidRequest("field '\(name)' is missing") }
        do {
            return try rule(text)
        } catch {
            throw APIError.invalidRequest(error.message)
        }
    }
}
