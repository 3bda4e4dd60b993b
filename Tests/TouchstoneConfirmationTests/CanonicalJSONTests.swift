import Foundation
import Testing
import TouchstoneConfirmation

/// RFC 8785 (JSON Canonicalization Scheme).
struct CanonicalJSONTests {
    /// The IEEE 754 values of RFC 8785 Appendix B and a few more, with what ECMAScript's `String(x)` prints for them
    /// (generated with Node.js 20; the same strings as the RFC's table).
    @Test(arguments: [
        ("0000000000000000", "0"), ("8000000000000000", "0"), ("0000000000000001", "5e-324"), ("8000000000000001", "-5e-324"),
        ("7fefffffffffffff", "1.7976931348623157e+308"), ("ffefffffffffffff", "-1.7976931348623157e+308"),
        ("4340000000000000", "9007199254740992"), ("c340000000000000", "-9007199254740992"),
        ("4430000000000000", "295147905179352830000"), ("44b52d02c7e14af5", "9.999999999999997e+22"),
        ("44b52d02c7e14af6", "1e+23"), ("44b52d02c7e14af7", "1.0000000000000001e+23"),
        ("444b1ae4d6e2ef4e", "999999999999999700000"), ("444b1ae4d6e2ef4f", "999999999999999900000"),
        ("444b1ae4d6e2ef50", "1e+21"), ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"), ("3eb0c6f7a0b5ed8d", "0.000001"),
        ("41b3de4355555553", "333333333.3333332"), ("41b3de4355555554", "333333333.33333325"),
        ("41b3de4355555555", "333333333.3333333"), ("41b3de4355555556", "333333333.3333334"),
        ("41b3de4355555557", "333333333.33333343"), ("becbf647612f3696", "-0.0000033333333333333333"),
        ("43143ff3c1cb0959", "1424953923781206.2"),
    ])
    func numbersAreWrittenAsECMAScriptWritesThem(bits: String, expected: String) throws {
        let value = Double(bitPattern: try #require(UInt64(bits, radix: 16)))
        #expect(CanonicalJSON.number(value) == expected)
    }

    @Test(arguments: [
        (1.0, "1"), (-1.0, "-1"), (0.1, "0.1"), (100.0, "100"), (1e20, "100000000000000000000"), (123456789012345.0, "123456789012345"),
        (1e-7, "1e-7"), (-0.5, "-0.5"), (4.5, "4.5"), (0.002, "0.002"), (1e-27, "1e-27"), (1e30, "1e+30"),
    ])
    func moreNumbers(value: Double, expected: String) {
        #expect(CanonicalJSON.number(value) == expected)
    }

    /// The example of RFC 8785 §3.2.2 (as values: its numbers are beyond what confirmation details accept).
    @Test func theRFCExample() {
        let value = JSONValue.object([
            "numbers": .array([.number(333333333.33333329), .number(1e30), .number(4.50), .number(2e-3), .number(0.000000000000000000000000001)]),
            "string": .string("\u{20ac}$\u{0F}\u{0a}A'\u{42}\u{22}\u{5c}\\\"/"),
            "literals": .array([.null, .bool(true), .bool(false)]),
        ])
        #expect(
            CanonicalJSON.string(value)
                == #"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        )
    }

    /// Every character below U+0020 as `JSON.stringify` writes it (short forms for five, `\u00xx` in lowercase for the
    /// rest), quotes and backslashes escaped, multi-byte UTF-8 and DEL as they are, also between escapes.
    @Test func everyControlCharacterIsEscapedAsJSONStringifyDoes() {
        let short: [UInt8: String] = [0x08: #"\b"#, 0x09: #"\t"#, 0x0A: #"\n"#, 0x0C: #"\f"#, 0x0D: #"\r"#]
        for byte in UInt8(0)..<0x20 {
            let expected = short[byte] ?? "\\u00" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
            let text = "é" + String(UnicodeScalar(byte)) + "😀"
            #expect(CanonicalJSON.string(.string(text)) == "\"é" + expected + "😀\"")
        }
        #expect(CanonicalJSON.string(.string("a\"b\\c\u{7F}/")) == "\"a\\\"b\\\\c\u{7F}/\"")
        #expect(CanonicalJSON.string(.string("")) == #""""#)
    }

    @Test func keysSortByUTF16CodeUnits() {
        // U+1F600 (surrogates D83D DE00) sorts before U+FB33 in UTF-16, after it in code points.
        let value = JSONValue.object(["\u{FB33}": .number(1), "\u{1F600}": .number(2), "a": .number(3), "B": .number(4)])
        #expect(CanonicalJSON.string(value) == "{\"B\":4,\"a\":3,\"\u{1F600}\":2,\"\u{FB33}\":1}")
    }
}

/// The strict parser that takes confirmation details.
struct StrictJSONParserTests {
    static func parse(_ text: String) throws(JSONInputError) -> JSONValue { try StrictJSONParser().parse(Array(text.utf8)) }

    @Test func whatItKeeps() throws {
        let value = try Self.parse(#"{"a": [1, 2.5, -0, true, null, "x\u00e9\ud83d\ude00"], "b": {}}"#)
        #expect(CanonicalJSON.string(value) == #"{"a":[1,2.5,0,true,null,"xé😀"],"b":{}}"#)
    }

    @Test(arguments: [
        (#"{"a": 1, "a": 2}"#, "twice"),
        (#"{"a": "\ud800"}"#, "lone surrogate"),
        (#"{"a": "\udc00x"}"#, "lone surrogate"),
        (#"{"a": 12345678901234567}"#, "15 significant"),
        (#"{"a": 0.1234567890123456}"#, "15 significant"),
        (#"{"a": 9007199254740993}"#, "significant"),
        (#"{"a": 1e300}"#, "2^53"),
        (#"{"a": 1e400}"#, "out of range"),
        (#"{"a": 01}"#, "leading zero"),
        (#"{"a": NaN}"#, "not valid JSON"),
        ("{\"a\": \"tab\there\"}", "control character"),
        (#"{"a": 1} x"#, "after the JSON value"),
    ])
    func whatItRefuses(text: String, reason: String) {
        do {
            _ = try Self.parse(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.reason.contains(reason), "\(text): \(error)")
        }
    }

    @Test func invalidUTF8IsRefused() {
        #expect(throws: JSONInputError.self) { try StrictJSONParser().parse([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D]) }
    }

    @Test func depthIsBounded() {
        let nested = String(repeating: "[", count: 20) + String(repeating: "]", count: 20)
        #expect(throws: JSONInputError.self) { try StrictJSONParser(maximumDepth: 16).parse(Array(nested.utf8)) }
    }

    /// Two different texts that a lax reader would take as one value are different values here or refused: no two
    /// distinct accepted details give one canonical form unless they are the same JSON value.
    @Test func distinctDetailsNeverShareAPayload() throws {
        let texts = [
            #"{"amount": 1}"#, #"{"amount": "1"}"#, #"{"amount": 1.5}"#, #"{"amount": 15e-1}"#, #"{"amount": true}"#,
            #"{"amount": null}"#, #"{"amount": [1]}"#, #"{"Amount": 1}"#, #"{"amount": 1, "currency": "EUR"}"#,
            #"{"note": "é"}"#, #"{"note": "e\u0301"}"#,
        ]
        // Keyed by bytes: Swift's String equality would take "é" and "e\u{0301}" for one string; the payload does not.
        var seen: [[UInt8]: String] = [:]
        for text in texts {
            let canonical = CanonicalJSON.serialize(try Self.parse(text))
            if let earlier = seen[canonical] {
                // Only texts for the same number (1.5 and 15e-1) may meet.
                #expect(text == #"{"amount": 15e-1}"# && earlier == #"{"amount": 1.5}"#, "\(earlier) and \(text) share one canonical form")
            }
            seen[canonical] = text
        }
        #expect(seen.count == texts.count - 1)
    }
}
