import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import SQLKit
import Testing
import TouchstoneServer
import TouchstoneStore
import TouchstoneTesting

/// A NUL (or another control character) in any string the API takes is a 400 `invalid_request`, on SQLite and on
/// PostgreSQL alike, and never reaches the database (issue #29, item 1): SQLite bound text up to its first NUL, so
/// `"<a real id>\u0000anything"` answered for the real registration; PostgreSQL refuses a NUL in text with an error.
struct NulInputTests {
    /// The databases the server runs on here: SQLite always, PostgreSQL when `TOUCHSTONE_TEST_POSTGRES_URL` is set.
    enum Database: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { self.rawValue }
    }

    /// Who sends a row's request.
    enum Caller { case nobody, user, admin }

    /// One route that takes a string: the request with a NUL in one of its strings. `{id}` in the path is the
    /// enrolled registration's id, `{user}` the account's id, `{confirmation}` a pending confirmation's id.
    struct Row: Sendable, CustomTestStringConvertible {
        var method: HTTPRequest.Method
        var path: String
        var caller: Caller
        var body: [String: any Sendable]?
        var testDescription: String { "\(self.method) \(self.path)" + (self.body.map { " \($0.keys.sorted())" } ?? "") }
    }

    static let nul = "\u{0}anything"

    static let rows: [Row] = [
        // The two attacks as reported: the real registration's id with a NUL and more.
        Row(method: .post, path: "/v1/biometrics/authentications/start", caller: .nobody, body: ["registrationId": "{id}" + nul]),
        Row(method: .post, path: "/v1/pin/authentications", caller: .nobody, body: ["registrationId": "{id}" + nul, "pin": "482613"]),
        Row(method: .post, path: "/v1/pin/authentications", caller: .nobody, body: ["registrationId": "{id}", "pin": "4826\u{0}"]),
        Row(
            method: .post, path: "/v1/biometrics/authentications/finish", caller: .nobody,
            body: ["registrationId": "{id}" + nul, "challenge": "c", "signature": "AAAA"]
        ),
        Row(
            method: .post, path: "/v1/biometrics/authentications/finish", caller: .nobody,
            body: ["registrationId": "{id}", "challenge": "c" + nul, "signature": "AAAA"]
        ),
        Row(method: .post, path: "/v1/biometrics/authentications/start", caller: .nobody, body: ["publicKey": "AAAA" + nul]),
        Row(method: .post, path: "/v1/users", caller: .nobody, body: ["email": "a\u{0}@example.com", "password": Flow.password]),
        Row(method: .post, path: "/v1/users", caller: .nobody, body: ["email": "nul@example.com", "password": "correct horse\u{0}"]),
        Row(
            method: .post, path: "/v1/users", caller: .nobody,
            body: ["email": "nul2@example.com", "password": Flow.password, "displayName": "Ana" + nul]
        ),
        Row(method: .post, path: "/v1/sessions", caller: .nobody, body: ["email": "{email}" + nul, "password": Flow.password]),
        Row(method: .put, path: "/v1/session/password", caller: .user, body: ["newPassword": "a new password\u{0}"]),
        Row(
            method: .post, path: "/v1/biometrics/registrations/start", caller: .user,
            body: ["publicKey": "AAAA", "algorithm": "ES256", "deviceId": "phone" + nul]
        ),
        Row(
            method: .post, path: "/v1/biometrics/registrations/start", caller: .user,
            body: ["publicKey": "AAAA", "algorithm": "ES256\u{0}", "deviceId": "phone"]
        ),
        Row(method: .post, path: "/v1/biometrics/registrations/finish", caller: .user, body: ["registrationId": "{id}" + nul, "signature": "AAAA"]),
        Row(method: .post, path: "/v1/biometrics/registrations/{id}/invalidate", caller: .nobody, body: ["reason": "key_invalidated", "deviceId": "d" + nul]),
        Row(method: .put, path: "/v1/biometrics/registrations/{id}/pin", caller: .user, body: ["pin": "1234\u{0}"]),
        Row(method: .post, path: "/v1/app-attest/keys", caller: .nobody, body: ["keyId": "k" + nul, "attestation": "AAAA", "challenge": "c"]),
        Row(method: .post, path: "/v1/passkeys/authentications/options", caller: .nobody, body: ["email": "{email}" + nul]),
        Row(method: .patch, path: "/v1/passkeys/some-id", caller: .user, body: ["name": "Key" + nul]),
        Row(method: .post, path: "/v1/confirmations", caller: .admin, body: ["summary": "Pay", "userId": "{user}" + nul]),
        Row(method: .post, path: "/v1/confirmations", caller: .user, body: ["summary": "Pay" + nul]),
        Row(method: .post, path: "/v1/confirmations/{confirmation}/approve", caller: .nobody, body: ["registrationId": "{id}" + nul, "signature": "AAAA"]),
        Row(method: .post, path: "/v1/tokens/introspect", caller: .admin, body: ["token": "eyJ" + nul]),
        Row(method: .post, path: "/v1/passkeys/registrations/options", caller: .user, body: ["hints": ["hybrid" + nul]]),
        Row(method: .post, path: "/v1/passkeys/authentications/options", caller: .nobody, body: ["hints": ["hybrid\u{0}"]]),
        Row(
            method: .post, path: "/v1/passkeys/registrations/verify", caller: .user,
            body: ["id": "AAAA" + nul, "rawId": "AAAA", "type": "public-key", "response": ["clientDataJSON": "e30", "attestationObject": "oA"]]
        ),
        Row(
            method: .post, path: "/v1/passkeys/authentications/verify", caller: .nobody,
            body: ["id": "AAAA", "rawId": "AAAA" + nul, "type": "public-key",
                   "response": ["clientDataJSON": "e30", "authenticatorData": "AA", "signature": "AA"]]
        ),
        Row(
            method: .post, path: "/v1/confirmations/{confirmation}/passkey-verify", caller: .nobody,
            body: ["id": "AAAA", "rawId": "AAAA" + nul, "type": "public-key",
                   "response": ["clientDataJSON": "e30", "authenticatorData": "AA", "signature": "AA"]]
        ),
        // Query parameters are percent-decoded: %00 is a NUL.
        Row(method: .get, path: "/v1/admin/users?email=ana%00x", caller: .admin, body: nil),
        Row(method: .get, path: "/v1/admin/events?userId={user}%00x", caller: .admin, body: nil),
        Row(method: .get, path: "/v1/admin/events?type=user.created%00", caller: .admin, body: nil),
        Row(method: .get, path: "/v1/session/events?cursor=1_a%00", caller: .user, body: nil),
        Row(method: .get, path: "/v1/admin/stats?window=hour%0A", caller: .admin, body: nil),
    ]

    static var databases: [Database] {
        let url = ProcessInfo.processInfo.environment["TOUCHSTONE_TEST_POSTGRES_URL"] ?? ""
        return url.isEmpty ? [.sqlite] : [.sqlite, .postgres]
    }

    @Test(arguments: Self.databases)
    func aControlCharacterInAnyStringIsABadRequest(database: Database) async throws {
        try await Self.withStore(database) { store in
            let (adminKey, _) = try await AdminKeys.create(name: "ops", store: store)
            try await TestServer.run(configuration: ConfirmationTests.configuration(), store: store) { client in
                let owner = try await ConfirmationTests.owner(client, "nul-\(UUID().uuidString.prefix(8))@example.com")
                #expect(try await Flow(client: client).setPin(owner.account.token, owner.registrationId, "482613").status == .ok)
                let (confirmation, _) = try await ConfirmationTests.pending(client, owner)
                func fill(_ text: String) -> String {
                    text.replacingOccurrences(of: "{id}", with: owner.registrationId)
                        .replacingOccurrences(of: "{user}", with: owner.account.userId)
                        .replacingOccurrences(of: "{email}", with: owner.account.email)
                        .replacingOccurrences(of: "{confirmation}", with: confirmation)
                }
                for row in Self.rows {
                    let body = row.body?.mapValues { value -> any Sendable in (value as? String).map(fill) ?? value }
                    let token: String? =
                        switch row.caller {
                        case .nobody: nil
                        case .user: owner.account.token
                        case .admin: adminKey
                        }
                    let response = try await client.request(row.method, fill(row.path), token: token, json: body)
                    #expect(response.status == .badRequest, "\(row.testDescription): \(String(decoding: response.body, as: UTF8.self))")
                    // A WebAuthn registration response is verified as a whole: its id is refused as malformed.
                    #expect(["invalid_request", "invalid_passkey_registration"].contains(response.errorCode), "\(row.testDescription)")
                    let message = (response.json["error"] as? [String: Any])?["message"] as? String ?? ""
                    // Named as a control character, or refused by the field's own rule (a PIN: only digits; a hint:
                    // one of three words; WebAuthn fields: base64url).
                    #expect(
                        message.contains("control character") || message.contains("U+0000") || message.contains("4 to 8 digits")
                            || message.contains("hints") || message.contains("base64") || message.contains("malformed"),
                        "\(row.testDescription): \(message)"
                    )
                }
                // The real id alone still works: the refusal is of the NUL, not of the registration.
                #expect(try await Flow(client: client).startLogin(owner.registrationId).status == .ok)
                #expect(try await Flow(client: client).pinLogin(owner.registrationId, "482613").status == .ok)
            }
        }
    }

    /// A control character in a path's id or address names nothing there is: 404, on both engines (on PostgreSQL, a
    /// blocked address's reached the database, which refused the NUL with an error: 500).
    @Test(arguments: Self.databases)
    func aControlCharacterInAPathNamesNothing(database: Database) async throws {
        try await Self.withStore(database) { store in
            let (adminKey, _) = try await AdminKeys.create(name: "ops", store: store)
            try await TestServer.run(configuration: ConfirmationTests.configuration(), store: store) { client in
                let paths = [
                    "/v1/admin/blocked-addresses/192.0.2.1%00", "/v1/admin/blocked-addresses/a%01b", "/v1/admin/users/a%00b",
                    "/v1/admin/registrations/a%00b", "/v1/admin/passkeys/a%00b", "/v1/admin/clients/a%00b", "/v1/admin/webhooks/a%00b",
                ]
                for path in paths {
                    let response = try await client.request(.delete, path, token: adminKey)
                    #expect(response.status == .notFound, "\(path): \(String(decoding: response.body, as: UTF8.self))")
                }
            }
        }
    }

    /// Opens a migrated store on a fresh database of the kind: a SQLite file, or a schema of its own on PostgreSQL.
    static func withStore(_ database: Database, _ body: (any TouchstoneStore) async throws -> Void) async throws {
        let logger = Logger(label: "test")
        switch database {
        case .sqlite:
            let path = TestServer.temporaryDatabasePath()
            defer { TemporaryFiles.remove(path) }
            let store = try await SQLTouchstoneStore.sqlite(.file(path: path), logger: logger)
            try await store.migrate()
            try await body(store)
        case .postgres:
            let url = try #require(ProcessInfo.processInfo.environment["TOUCHSTONE_TEST_POSTGRES_URL"])
            let schema = "nul_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            let admin = try PostgresExecutor.open(.init(url: url), logger: logger)
            try await admin.withDatabase { db in try await db.raw("CREATE SCHEMA \(unsafeRaw: schema)").run() }
            let separator = url.contains("?") ? "&" : "?"
            let store = SQLTouchstoneStore(executor: try PostgresExecutor.open(.init(url: url + separator + "schema=\(schema)"), logger: logger))
            do {
                try await store.migrate()
                try await body(store)
            } catch {
                try? await admin.withDatabase { db in try await db.raw("DROP SCHEMA \(unsafeRaw: schema) CASCADE").run() }
                try? await admin.shutdown()
                throw error
            }
            try await admin.withDatabase { db in try await db.raw("DROP SCHEMA \(unsafeRaw: schema) CASCADE").run() }
            try await admin.shutdown()
        }
    }
}
