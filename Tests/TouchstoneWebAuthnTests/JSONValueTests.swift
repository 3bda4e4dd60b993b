import Foundation
import Testing
import TouchstoneWebAuthn

/// The strict JSON parser behind the sign-in's hot path (response JSON and clientDataJSON).
struct JSONValueTests {
    private func parse(_ text: String) throws -> JSONValue { try JSONValue(parsing: Array(text.utf8)) }

    @Test func parsesEveryKindOfValue() throws {
        let value = try self.parse(#" { "s": "x", "t": true, "f": false, "n": null, "i": -12.5e+3, "a": [1, [], {}], "o": {"k": "v"} } "#)
        #expect(value == .object([
            "s": .string("x"), "t": .bool(true), "f": .bool(false), "n": .null, "i": .number("-12.5e+3"),
            "a": .array([.number("1"), .array([]), .object([:])]), "o": .object(["k": .string("v")]),
        ]))
    }

    @Test func decodesEscapes() throws {
        let value = try self.parse(#""q\" b\\ s\/ \b\f\n\r\t \u00e9 \uD83D\uDE00 é""#)
        #expect(value == .string("q\" b\\ s/ \u{08}\u{0C}\n\r\t é 😀 é"))
    }

    @Test(arguments: [
        #""\uD83D""#, #""\uDE00""#, #""\uD83Dx""#, #""\uD83D\u0041""#,  // lone or unpaired surrogates
        #""\x""#, #""\u12G4""#, "\"a\u{01}b\"", "\"tab\tin\"",  // bad escapes, raw control characters
        #"{"a":1,"a":2}"#,  // duplicate keys
        "01", "1.", ".5", "-", "1e", "+1", "0x10", "NaN",  // numbers outside the grammar
        "tru", "nul", "[1,]", "{\"a\":1,}", "[1 2]", "{\"a\" 1}", "{1:2}", "\"open",  // structure
        "{} {}", "1 x", "",  // trailing data, nothing
    ])
    func rejects(_ text: String) {
        #expect(throws: JSONValue.ParseError.self) { try self.parse(text) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: [0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: [0x22, 0x5C, 0x6E, 0xFF, 0x22]) }  // after an escape
    }

    @Test func objectsCompareWithoutOrderAndFindDuplicatesBeyondTheIndexedCount() throws {
        #expect(try self.parse(#"{"a":1,"b":[true]}"#) == self.parse(#"{"b":[true],"a":1}"#))
        #expect(try self.parse(#"{"a":1,"b":2}"#) != self.parse(#"{"a":1,"c":2}"#))
        #expect(Set([try self.parse(#"{"a":1,"b":2}"#), try self.parse(#"{"b":2,"a":1}"#)]).count == 1)
        // Enough members that the keys are also kept in a set: lookups and the duplicate check still work.
        let members = (0..<40).map { "\"k\($0)\":\($0)" }
        let object = try #require(try self.parse("{" + members.joined(separator: ",") + "}").objectValue)
        #expect(object.count == 40 && object["k0"] == .number("0") && object["k39"] == .number("39") && object["k40"] == nil)
        #expect(object.keys == (0..<40).map { "k\($0)" })
        for duplicate in ["k3", "k20", "k39"] {
            #expect(throws: JSONValue.ParseError.self) {
                try self.parse("{" + members.joined(separator: ",") + ",\"\(duplicate)\":0}")
            }
        }
        // A key spelled with an escape is the same key.
        #expect(throws: JSONValue.ParseError.self) { try self.parse(#"{"a":1,"\u0061":2}"#) }
    }

    /// Strings are scanned eight bytes at a time until a byte needs a look: whatever the offset of a quote, an
    /// escape, a control character or a non-ASCII byte, the result is the byte-by-byte one.
    @Test func stringsAreReadAlikeWhereverTheirSpecialBytesFall() throws {
        for length in 0..<20 {
            let plain = String(repeating: "x", count: length)
            #expect(try self.parse("\"\(plain)\"") == .string(plain))
            #expect(try self.parse("\"\(plain)\\n\(plain)\"") == .string(plain + "\n" + plain))
            #expect(try self.parse("\"\(plain)é\(plain)\"") == .string(plain + "é" + plain))
            #expect(try self.parse("\"\(plain)~\u{7F}\(plain)\"") == .string(plain + "~\u{7F}" + plain))
            #expect(throws: JSONValue.ParseError.self) { try self.parse("\"\(plain)\u{1F}\(plain)\"") }
            #expect(throws: JSONValue.ParseError.self) { try self.parse("\"\(plain)") }
            var invalid = Array("\"\(plain)\(plain)\"".utf8)
            invalid.insert(0xFF, at: 1 + length)
            #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: invalid) }
        }
    }

    @Test func limitsNesting() throws {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONValue.ParseError.self) { try self.parse(deep) }
        let allowed = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        #expect(try self.parse(allowed) != .null)
        #expect(throws: JSONValue.ParseError.self) {
            try self.parse(String(repeating: "[", count: 33) + String(repeating: "]", count: 33))
        }
    }

    // MARK: AuthenticationResponseJSON

    static let response = #"""
        {"id":"AQID","rawId":"AQID","type":"public-key","authenticatorAttachment":"platform","clientExtensionResults":{},
         "response":{"clientDataJSON":"e30","authenticatorData":"AAAA","signature":"MEU","userHandle":null}}
        """#

    @Test func readsTheSameFieldsAsTheDecodableConformance() throws {
        let parsed = try AuthenticationResponseJSON(json: Array(Self.response.utf8))
        let decoded = try JSONDecoder().decode(AuthenticationResponseJSON.self, from: Data(Self.response.utf8))
        #expect(parsed.id == decoded.id)
        #expect(parsed.rawId == decoded.rawId)
        #expect(parsed.type == decoded.type)
        #expect(parsed.response.clientDataJSON == decoded.response.clientDataJSON)
        #expect(parsed.response.authenticatorData == decoded.response.authenticatorData)
        #expect(parsed.response.signature == decoded.response.signature)
        #expect(parsed.response.userHandle == nil)
        #expect(decoded.response.userHandle == nil)
    }

    @Test(arguments: [
        ("not json", "request body is not valid JSON"),
        ("[1]", "request body must be a JSON object"),
        (#"{"id":"a","rawId":"a","type":"t","response":{}}"#, "missing field 'response.clientDataJSON'"),
        (#"{"id":"a","rawId":"a","type":"t"}"#, "missing field 'response'"),
        (#"{"id":"a","rawId":"a","type":"t","response":[]}"#, "field 'response' has the wrong type"),
        (#"{"id":1,"rawId":"a","type":"t","response":{"clientDataJSON":"a","authenticatorData":"a","signature":"a"}}"#,
         "field 'id' has the wrong type"),
        (#"{"id":"a","rawId":"a","type":"t","response":{"clientDataJSON":"a","authenticatorData":"a","signature":"a","userHandle":5}}"#,
         "field 'response.userHandle' has the wrong type"),
    ])
    func namesTheFieldThatIsWrong(text: String, message: String) {
        do {
            _ = try AuthenticationResponseJSON(json: Array(text.utf8))
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description == message)
        }
    }
}

/// `clientDataJSON` as the ceremonies read it: the fields and types of WebAuthn Level 3 §5.8.1.
struct CollectedClientDataTests {
    private func parse(_ text: String) throws(WebAuthnError) -> CollectedClientData {
        try CollectedClientData(bytes: Array(text.utf8))
    }

    @Test func readsTheFieldsAndKeepsTheRawBytes() throws {
        let text = #"{"type":"webauthn.get","challenge":"AQID","origin":"https://example.com","crossOrigin":true,"topOrigin":"https://top.example","other":{"x":[1]}}"#
        let data = try self.parse(text)
        #expect(data.type == "webauthn.get")
        #expect(data.challenge == [1, 2, 3])
        #expect(data.origin == "https://example.com")
        #expect(data.crossOrigin)
        #expect(data.topOrigin == "https://top.example")
        #expect(data.rawValue == Array(text.utf8))
        let minimal = try self.parse(#"{"type":"webauthn.get","challenge":"AQID","origin":"o","crossOrigin":null}"#)
        #expect(!minimal.crossOrigin)
        #expect(minimal.topOrigin == nil)
        // Token Binding (Level 2): a status of its enumeration, or a legacy client's string, is let through.
        for binding in [#"{"status":"supported"}"#, #"{"status":"present","id":"AQID"}"#, #""unused""#] {
            #expect(throws: Never.self) { try self.parse(#"{"type":"t","challenge":"AQID","origin":"o","tokenBinding":"# + binding + "}") }
        }
    }

    @Test(arguments: [
        ("[]", "clientDataJSON is not a JSON object"),
        (#"{"type":"a","type":"b","challenge":"AQID","origin":"o"}"#, "clientDataJSON is not a JSON object"),
        (#"{"challenge":"AQID","origin":"o"}"#, "clientDataJSON has no type"),
        (#"{"type":"t","origin":"o"}"#, "clientDataJSON has no challenge"),
        (#"{"type":"t","challenge":"AQID"}"#, "clientDataJSON has no origin"),
        (#"{"type":1,"challenge":"AQID","origin":"o"}"#, "clientDataJSON type has the wrong type"),
        (#"{"type":"t","challenge":"AQID","origin":"o","crossOrigin":"yes"}"#, "clientDataJSON crossOrigin has the wrong type"),
        (#"{"type":"t","challenge":"AQID","origin":"o","topOrigin":false}"#, "clientDataJSON topOrigin has the wrong type"),
        (#"{"type":"t","challenge":"!!","origin":"o"}"#, "clientDataJSON challenge is not base64url"),
        (#"{"type":"t","challenge":"AQID","origin":"o","tokenBinding":{"status":"not-supported"}}"#, "clientDataJSON tokenBinding.status must be present or supported"),
        (#"{"type":"t","challenge":"AQID","origin":"o","tokenBinding":{}}"#, "clientDataJSON tokenBinding.status must be present or supported"),
    ])
    func refusesMalformedClientData(text: String, message: String) {
        do {
            _ = try self.parse(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.code == .malformed)
            #expect(error.reason == message)
        }
    }
}
