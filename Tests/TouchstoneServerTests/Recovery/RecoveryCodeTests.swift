import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TouchstoneCrypto
import TouchstoneTesting

@testable import TouchstoneServer

/// Recovery codes (issue #33): made with a fresh password or passkey, shown once, single use, and a way back in that
/// enrols one new device or passkey.
struct RecoveryCodeTests {
    static func codes(_ flow: Flow, _ token: String) async throws -> [String] {
        let response = try await flow.client.request(.post, "/v1/recovery-codes", token: token)
        try #require(response.status == .created, "\(String(decoding: response.body, as: UTF8.self))")
        #expect(response.headers[.cacheControl] == "no-store")
        return try #require(response.any(["codes"]) as? [String])
    }

    @Test func tenCodesOfTheUnambiguousAlphabetShownOnce() async throws {
        try await RecoveryTests.run { flow, _, _ in
            let account = try await flow.signUp()
            let codes = try await Self.codes(flow, account.token)
            #expect(codes.count == 10 && Set(codes).count == 10)
            for code in codes {
                #expect(code.range(of: "^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$", options: .regularExpression) != nil, "\(code)")
            }
        }
    }

    @Test func aCodeSignsInOnceEnrolsOneDeviceAndMailsTheAccount() async throws {
        try await RecoveryTests.run { flow, mailbox, _ in
            let account = try await flow.signUp()
            let codes = try await Self.codes(flow, account.token)
            // Case and the hyphen are ignored.
            let typed = codes[0].uppercased().replacingOccurrences(of: "-", with: "")
            let signedIn = try await flow.client.request(.post, "/v1/recovery-codes/verify", json: ["email": account.email, "code": typed])
            #expect(signedIn.status == .ok)
            #expect(signedIn.any(["session", "methods"]) as? [String] == ["recovery_code"])
            let token = try #require(signedIn.value("session", "token"))
            let notice = try await mailbox.waitForMail(to: account.email, kind: "recovery_code_used")
            #expect(notice.text.contains("9 unused codes are left"))
            let again = try await flow.client.request(.post, "/v1/recovery-codes/verify", json: ["email": account.email, "code": codes[0]])
            #expect(again.status == .badRequest && again.errorCode == "invalid_code")

            // One new device; not a second, and no password change.
            _ = try await flow.enroll(token, TestDeviceKey(.es256))
            let second = try await flow.startRegistration(token, TestDeviceKey(.es256))
            #expect(second.status == .forbidden && second.errorCode == "reauthentication_required")
            let change = try await flow.client.request(.put, "/v1/session/password", token: token, json: ["newPassword": "a new passphrase 42"])
            #expect(change.errorCode == "reauthentication_required")
            // Nor new recovery codes (a password or passkey is needed).
            let more = try await flow.client.request(.post, "/v1/recovery-codes", token: token)
            #expect(more.status == .forbidden && more.errorCode == "reauthentication_required")
        }
    }

    @Test func newCodesReplaceTheOldAndUnknownAddressesGetTheSameAnswer() async throws {
        try await RecoveryTests.run { flow, _, _ in
            let account = try await flow.signUp()
            let old = try await Self.codes(flow, account.token)
            _ = try await Self.codes(flow, account.token)
            let replaced = try await flow.client.request(.post, "/v1/recovery-codes/verify", json: ["email": account.email, "code": old[1]])
            #expect(replaced.errorCode == "invalid_code")
            let unknown = try await flow.client.request(.post, "/v1/recovery-codes/verify", json: ["email": "nobody@example.com", "code": old[1]])
            #expect(unknown.status == .badRequest && unknown.errorCode == "invalid_code")
            for malformed in ["abc", "uuuuu-uuuuu", "0123456789ab", ""] {
                let response = try await flow.client.request(.post, "/v1/recovery-codes/verify", json: ["email": account.email, "code": malformed])
                #expect(response.status == .badRequest && response.errorCode == "invalid_request", "\(malformed)")
            }
        }
    }

    @Test func aStaleSessionCannotMakeCodes() async throws {
        try await RecoveryTests.run { flow, _, clock in
            let account = try await flow.signUp()
            clock.advance(by: 11 * 60)
            // The session idled out at 15 minutes; at 11 it lives but the password is no longer fresh.
            let response = try await flow.client.request(.post, "/v1/recovery-codes", token: account.token)
            #expect(response.status == .forbidden && response.errorCode == "reauthentication_required")
        }
    }

    @Test func crockfordReadingsAreForgiven() {
        #expect(RecoveryCodes.normalize("O1IL0-abcde") == "01110abcde")
        #expect(RecoveryCodes.normalize("k7m2p 9xq4r") == "k7m2p9xq4r")
        #expect(RecoveryCodes.normalize("k7m2p-9xq4") == nil)
        #expect(RecoveryCodes.normalize("k7m2p-9xq4u") == nil)
        #expect(RecoveryCodes.normalize("\u{212A}7m2p-9xq4r") == nil)
    }
}
