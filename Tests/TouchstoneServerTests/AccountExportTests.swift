import Crypto
import Foundation
import HTTPTypes
import Testing
import TouchstoneCrypto
import TouchstoneServer
import TouchstoneTesting

/// `GET /v1/users/me/export` (issue #42): everything Touchstone holds about the user in one download, and never a
/// token, a hash, a code or a secret.
struct AccountExportTests {
    @Test func theExportHoldsTheAccountsDataAndNoSecret() async throws {
        try await RecoveryTests.run { flow, mailbox, _ in
            let client = flow.client
            let owner = try await ConfirmationTests.owner(client, "export@example.com")
            let token = owner.account.token
            #expect(try await flow.setPin(token, owner.registrationId, "8642").status == .ok)
            _ = try await flow.pinLogin(owner.registrationId, "1111")
            let pinToken = try #require(try await flow.pinLogin(owner.registrationId, "8642").value("session", "token"))
            let (id, payload) = try await ConfirmationTests.pending(client, owner)
            #expect(try await ConfirmationTests.approve(client, id, registrationId: owner.registrationId, signature: ConfirmationTests.sign(owner.device, payload)).status == .ok)
            let codes = try #require(try await client.request(.post, "/v1/recovery-codes", token: token).json["codes"] as? [String])
            let verification = try #require(try await mailbox.waitForMail(to: "export@example.com", kind: "verify_email").code)
            let started = try await client.request(.post, "/v1/sign-in-requests", json: ["email": "export@example.com"])
            let pollToken = try #require(started.value("pollToken"))
            let qrSecret = try #require(started.value("qr")?.components(separatedBy: "secret=").last?.components(separatedBy: "&").first)
            let enrolled = try await client.request(.post, "/v1/biometrics/registrations/\(owner.registrationId)/device-credential", token: token)
            let deviceCredential = try #require(enrolled.value("deviceCredential"))
            let accessToken = try #require(try await client.request(.post, "/v1/session/token", token: token).value("accessToken"))

            let response = try await client.request(.get, "/v1/users/me/export", token: token)
            #expect(response.status == .ok)
            #expect(response.headers[.contentDisposition] == #"attachment; filename="touchstone-export.json""#)
            #expect(response.headers[.cacheControl] == "no-store")
            let export = response.json
            #expect((export["user"] as? [String: Any])?["email"] as? String == "export@example.com")
            #expect((export["devices"] as? [[String: Any]])?.first?["id"] as? String == owner.registrationId)
            #expect((export["devices"] as? [[String: Any]])?.first?["pin"] as? String == "set")
            let confirmation = try #require((export["confirmations"] as? [[String: Any]])?.first)
            #expect(confirmation["payload"] as? String == payload)
            #expect((confirmation["evidence"] as? [String: Any])?["method"] as? String == "biometric")
            #expect((export["signInRequests"] as? [[String: Any]])?.count == 1)
            // Every live session, named by its id (a session gets one when first needed), the caller's marked.
            let sessions = try #require(export["sessions"] as? [[String: Any]])
            #expect(sessions.count == 2 && sessions.allSatisfy { ($0["id"] as? String)?.isEmpty == false })
            #expect(sessions.filter { $0["current"] as? Bool == true }.count == 1)
            let events = try #require(export["events"] as? [[String: Any]])
            #expect(events.first?["type"] as? String == "user.created")
            #expect(events.contains { $0["type"] as? String == "confirmation.approved" })
            #expect(events.contains { $0["type"] as? String == "pin_login" && $0["outcome"] as? String == "failure" })

            // Every secret of the account, and the hashes the server keeps of them, are absent.
            let text = String(decoding: response.body, as: UTF8.self)
            var secrets = [token, pinToken, Flow.password, "8642", verification, pollToken, qrSecret, deviceCredential, accessToken] + codes
            secrets += [token, pinToken, pollToken, deviceCredential].map { Hex.encode(Array(SHA256.hash(data: Array($0.utf8)))) }
            for secret in secrets { #expect(!Self.holds(text, secret), "the export holds a secret") }
            #expect(!text.lowercased().contains("hash"))
        }
    }

    @Test func aPinSessionOrAStalePasswordGetsNoExport() async throws {
        try await RecoveryTests.run { flow, _, clock in
            let owner = try await ConfirmationTests.owner(flow.client, "private@example.com")
            _ = try await flow.setPin(owner.account.token, owner.registrationId, "2468")
            let pinToken = try #require(try await flow.pinLogin(owner.registrationId, "2468").value("session", "token"))
            let refused = try await flow.client.request(.get, "/v1/users/me/export", token: pinToken)
            #expect(refused.status == .forbidden && refused.errorCode == "reauthentication_required")
            clock.advance(by: 11 * 60)
            let stale = try await flow.client.request(.get, "/v1/users/me/export", token: owner.account.token)
            #expect(stale.errorCode == "reauthentication_required")
            #expect(try await flow.client.request(.get, "/v1/users/me/export").status == .unauthorized)
        }
    }

    /// Whether `text` holds `secret`. A short one (a PIN, a mailed code) counts only as a token of its own: the export's
    /// random ids hold any four or six digits by chance (the Android SDK's log test once failed on an address's random
    /// hex and its PIN).
    static func holds(_ text: String, _ secret: String) -> Bool {
        guard secret.utf8.count <= 8 else { return text.contains(secret) }
        let bytes = Array(text.utf8), needle = Array(secret.utf8)
        guard bytes.count >= needle.count else { return false }
        func isWordByte(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
        for start in 0...(bytes.count - needle.count) where bytes[start..<(start + needle.count)].elementsEqual(needle) {
            let before = start > 0 ? bytes[start - 1] : nil
            let after = start + needle.count < bytes.count ? bytes[start + needle.count] : nil
            if !(before.map(isWordByte) ?? false) && !(after.map(isWordByte) ?? false) { return true }
        }
        return false
    }
}
