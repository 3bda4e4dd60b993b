import Foundation
import HTTPTypes
import Testing
@testable import TouchstoneServer
import TouchstoneTesting

/// Issue #44 item 7: what the server accepts as an email address and what the OpenAPI document declares agree, so a
/// fuzzer's schema-valid address is never refused (random seeds found a non-ASCII local part answered against a
/// `format: email` schema, and an unassigned code point refused as a "control character").
struct EmailAddressTests {
    /// Every request schema's address pattern is one pattern, and its local-part character class excludes exactly the
    /// code points the rule refuses (controls, format, private use, line separators, white space, `"(),:;<>[\]@.`).
    @Test func theDocumentsAddressPatternExcludesExactlyWhatTheRuleRefuses() async throws {
        let body = try await TestServer.run { client in try await client.request(.get, "/openapi.json").body }
        let document = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        var patterns = Set<String>()
        Self.collect(document) { name, schema in
            if name == "email", let pattern = schema["pattern"] as? String, pattern.hasPrefix("^[^\\u0000"), pattern.contains("@[A-Za-z0-9]") { patterns.insert(pattern) }
        }
        #expect(patterns.count == 1, "\(patterns.count) different address patterns")
        let pattern = try #require(patterns.first)
        let characterClass = String(pattern.dropFirst().prefix(while: { $0 != "{" }))
        let regex = try NSRegularExpression(pattern: "^\(characterClass)$")
        // The whole Basic Multilingual Plane, and the planes where format and private-use characters are (1, 14, 15, 16)
        // sampled around every category change.
        var values = Array(0...0xFFFF)
        values += Array(0x10000...0x1FFFF) + Array(0xE0000...0xE0FFF) + [0xEFFFF, 0xF0000, 0xF1234, 0xFFFFD, 0xFFFFE, 0xFFFFF]
        values += [0x100000, 0x10ABCD, 0x10FFFD, 0x10FFFE, 0x10FFFF, 0x2A6DF, 0x2A6E0, 0x30000, 0x5ABCD]
        var mismatches: [String] = []
        for value in values {
            guard let scalar = Unicode.Scalar(value) else { continue }  // surrogates: never in a JSON string's text
            let sample = String(Character(scalar))
            let whole = NSRange(sample.startIndex..., in: sample)
            let allowed = regex.firstMatch(in: sample, range: whole)?.range == whole
            let refused = InputRules.isRefusedInAddresses(scalar) || scalar.properties.isWhitespace || "\"(),:;<>[\\]@.".unicodeScalars.contains(scalar)
            if allowed == refused { mismatches.append("U+\(String(value, radix: 16, uppercase: true))") }
        }
        #expect(mismatches.isEmpty, "pattern and rule differ at \(mismatches.prefix(20))")
    }

    /// The rule's edges through the API: a non-ASCII local part is accepted and answered as sent (NFC, lowercase); an
    /// unassigned code point is accepted; a format character is refused and named for what it is; 64 characters
    /// before the @ pass even when they are 4 bytes each, 65 do not.
    @Test func addressesAtTheRulesEdges() async throws {
        try await TestServer.run { client in
            let password = Flow.password
            let accepted = ["José.Ñandú@example.com", "\u{0378}x@example.com", String(repeating: "😀", count: 64) + "@example.com"]
            for email in accepted {
                let response = try await client.request(.post, "/v1/users", json: ["email": email, "password": password])
                #expect(response.status == .created, "\(email): \(response.status) \(String(decoding: response.body, as: UTF8.self))")
                #expect(response.value("user", "email") == email.precomposedStringWithCanonicalMapping.lowercased(), "\(email)")
            }
            let refused: [(String, String)] = [
                ("ab\u{200B}c@example.com", "field 'email' must not contain control, format, private-use or surrogate characters (found U+200B)"),
                ("a\u{E0041}@example.com", "field 'email' must not contain control, format, private-use or surrogate characters (found U+E0041)"),
                ("a\u{F0000}@example.com", "field 'email' must not contain control, format, private-use or surrogate characters (found U+F0000)"),
                (String(repeating: "😀", count: 65) + "@example.com", "field 'email' is not a valid email address"),
                ("a" + String(repeating: "b", count: 250) + "@x.io", "field 'email' is longer than 254 characters"),
                (".a@example.com", "field 'email' is not a valid email address"),
            ]
            for (email, message) in refused {
                let response = try await client.request(.post, "/v1/users", json: ["email": email, "password": password])
                #expect(response.status == .badRequest, "\(email)")
                #expect(response.any(["error", "message"]) as? String == message, "\(email)")
            }
        }
    }

    static func collect(_ value: Any, _ visit: (String, [String: Any]) -> Void) {
        if let object = value as? [String: Any] {
            for (key, child) in object {
                if let schema = child as? [String: Any] { visit(key, schema) }
                Self.collect(child, visit)
            }
        } else if let array = value as? [Any] {
            for child in array { Self.collect(child, visit) }
        }
    }
}
