import Foundation
import Mustache

/// The mails the server writes (issue #33), each a plain-text and an HTML Mustache template in `Resources/mail/`.
enum MailKind: String, Sendable, CaseIterable {
    case verifyEmail = "verify_email"
    case passwordReset = "password_reset"
    case signInCode = "sign_in_code"
    case passwordChanged = "password_changed"
    case deviceEnrolled = "device_enrolled"
    case passkeyAdded = "passkey_added"
    case lockout
    case recoveryCodeUsed = "recovery_code_used"
    case emailChange = "email_change"
    case emailChangeNotice = "email_change_notice"
    /// Goodbye: the account was deleted (by its user or an operator).
    case accountDeleted = "account_deleted"
}

/// Renders mails from the templates: the text template's first line is `Subject: ...`; the rest is the text part.
/// Values are escaped in the HTML part (Mustache's default) and not in the text (`{{% CONTENT_TYPE: TEXT}}`).
struct MailTemplates: Sendable {
    private let library: MustacheLibrary

    struct Rendered: Sendable, Hashable {
        var subject: String
        var text: String
        var html: String
    }

    init() {
        var library = MustacheLibrary()
        let names = MailKind.allCases.flatMap { ["\($0.rawValue).txt", "\($0.rawValue).html"] } + ["layout_top", "layout_bottom"]
        for name in names {
            // A template missing from the bundle is a build defect; the tests render every kind.
            guard let url = Bundle.module.url(forResource: name, withExtension: "mustache", subdirectory: "mail"),
                let text = try? String(contentsOf: url, encoding: .utf8),
                let template = try? MustacheTemplate(string: text)
            else {
                continue
            }
            library.register(template, named: name)
        }
        self.library = library
    }

    /// The mail of `kind` with `values` (strings only: what a mail shows is text).
    func render(_ kind: MailKind, _ values: [String: String]) -> Rendered? {
        guard let full = self.library.render(values, withTemplate: "\(kind.rawValue).txt") else { return nil }
        let lines = full.drop(while: { $0 == "\n" }).split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        guard lines.count == 2, lines[0].hasPrefix("Subject: ") else { return nil }
        let subject = String(lines[0].dropFirst("Subject: ".count))
        var withSubject = values
        withSubject["subject"] = subject
        guard let html = self.library.render(withSubject, withTemplate: "\(kind.rawValue).html") else { return nil }
        return Rendered(subject: subject, text: lines[1].trimmingCharacters(in: .newlines) + "\n", html: html)
    }
}
