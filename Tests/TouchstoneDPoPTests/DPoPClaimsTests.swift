import Foundation
import Testing
import TouchstoneTesting

@testable import TouchstoneDPoP

/// The proof payload's one-pass reader (`DPoPClaims`), against Foundation's `JSONDecoder` as the reference: on
/// generated objects both read the same six claims, mutated texts never crash it and are never read differently, and
/// what RFC 8259 forbids is refused. The generators are seeded: a failure reproduces.
struct DPoPClaimsTests {
    /// The six claims as Foundation's `JSONDecoder` reads them, a member of another type counting as absent; nil when
    /// the text is not a JSON object.
    static func reference(_ bytes: [UInt8]) -> DPoPClaims? {
        struct Reference: Decodable {
            var claims = DPoPClaims()
            enum Key: String, CodingKey { case jti, htm, htu, ath, nonce, iat }
            init(from decoder: any Decoder) throws {
                let members = try decoder.container(keyedBy: Key.self)
                self.claims.jti = try? members.decode(String.self, forKey: .jti)
                self.claims.htm = try? members.decode(String.self, forKey: .htm)
                self.claims.htu = try? members.decode(String.self, forKey: .htu)
                self.claims.ath = try? members.decode(String.self, forKey: .ath)
                self.claims.nonce = try? members.decode(String.self, forKey: .nonce)
                self.claims.iat = try? members.decode(Double.self, forKey: .iat)
            }
        }
        return (try? JSONDecoder().decode(Reference.self, from: Data(bytes)))?.claims
    }

    static let names = ["jti", "htm", "htu", "ath", "nonce", "iat", "exp", "a", "j\\u0074i", "", "\\u00e9t\\u00e9", "ht\\/u"]

    /// A random JSON value (as text), nested up to `depth`.
    static func value(_ random: inout SplitMix, depth: Int) -> String {
        switch Int.random(in: 0..<(depth > 0 ? 9 : 6), using: &random) {
        case 0: return Self.string(&random)
        case 1: return String(Int.random(in: -2_000_000_000...2_000_000_000, using: &random))
        case 2: return ["1.5", "-0", "0.25e1", "1800000000", "1E3", "-12.5E-2", "1.8e9"].randomElement(using: &random)!
        case 3: return ["true", "false", "null"].randomElement(using: &random)!
        case 4, 5: return Self.string(&random)
        case 6: return "[" + (0..<Int.random(in: 0..<4, using: &random)).map { _ in Self.value(&random, depth: depth - 1) }.joined(separator: ",") + "]"
        default:
            return "{" + (0..<Int.random(in: 0..<3, using: &random)).map { index in
                "\"k\(index)\":" + Self.value(&random, depth: depth - 1)
            }.joined(separator: ", ") + "}"
        }
    }

    /// A random JSON string: plain text, escapes of every kind, a surrogate pair, non-ASCII text.
    static func string(_ random: inout SplitMix) -> String {
        let pieces = ["abc", "POST", "https://auth.example.com/oauth2/token", "\\\"", "\\\\", "\\/", "\\n", "\\t", "\\b", "\\f", "\\r",
                      "\\u0041", "\\u00e9", "\\ud83d\\ude00", "é", "😀", " ", "-_.~"]
        return "\"" + (0..<Int.random(in: 0..<5, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined() + "\""
    }

    static func whitespace(_ random: inout SplitMix) -> String {
        ["", "", " ", "\n", "\t ", "\r\n"].randomElement(using: &random)!
    }

    /// A random object whose member names never repeat (Foundation would keep one of two, this reader refuses both).
    static func object(_ random: inout SplitMix) -> String {
        var names = Self.names.shuffled(using: &random)
        names.removeLast(Int.random(in: 0..<names.count, using: &random))
        let members = names.map { name in
            let w = Self.whitespace(&random)
            return w + "\"" + name + "\"" + w + ":" + Self.whitespace(&random) + Self.value(&random, depth: 3) + w
        }
        return Self.whitespace(&random) + "{" + members.joined(separator: ",") + "}" + Self.whitespace(&random)
    }

    @Test func generatedObjectsReadAsFoundationReadsThem() throws {
        var random = SplitMix(state: 9449)
        var read = 0
        for round in 0..<3000 {
            let text = Self.object(&random)
            let expected = try #require(Self.reference(Array(text.utf8)), "round \(round): the generator made invalid JSON: \(text)")
            // "j\u0074i" is jti spelled with an escape: a second jti when both were drawn.
            let escapedTwice = text.contains("\"jti\"") && text.contains("\"j\\u0074i\"")
            let claims = DPoPClaims.parse(Array(text.utf8))
            if escapedTwice {
                #expect(claims == nil, "round \(round): a duplicated jti was read: \(text)")
            } else {
                #expect(claims == expected, "round \(round): \(text)")
                read += 1
            }
        }
        #expect(read > 1500)
    }

    @Test func mutatedTextsNeverCrashAndAreNeverReadDifferently() {
        var random = SplitMix(state: 7638)
        let alphabet = Array("{}[]\":,\\ue0123456789.-+Eatrflsn \u{0}\u{1f}\u{7f}".utf8) + [0xC3, 0xA9, 0xFF, 0xED, 0xA0]
        var accepted = 0
        for _ in 0..<5000 {
            var bytes = Array(Self.object(&random).utf8)
            for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
                let index = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[index] = alphabet.randomElement(using: &random)!
                case 1: bytes.remove(at: index)
                default: bytes.insert(alphabet.randomElement(using: &random)!, at: index)
                }
            }
            guard let claims = DPoPClaims.parse(bytes) else { continue }
            accepted += 1
            // What this reader accepts, Foundation reads too, and the same way (unless a member repeats, which this
            // reader refuses only among the six).
            let text = String(decoding: bytes, as: UTF8.self)
            if let expected = Self.reference(bytes) {
                #expect(claims == expected, "\(text)")
            } else {
                Issue.record("accepted what Foundation refuses: \(text)")
            }
        }
        #expect(accepted > 100)
    }

    @Test func whatRFC8259ForbidsIsRefused() {
        let refused = [
            "", " ", "[]", "\"jti\"", "{", "}", "{\"jti\":\"a\",}", "{\"jti\":\"a\"} x", "{'jti':'a'}", "{\"jti\":01}",
            "{\"iat\":01}", "{\"iat\":1.}", "{\"iat\":.5}", "{\"iat\":+1}", "{\"iat\":1e}", "{\"iat\":NaN}", "{\"iat\":Infinity}",
            "{\"jti\":\"a\u{1}\"}", "{\"jti\":\"\\x\"}", "{\"jti\":\"\\u12\"}", "{\"jti\":\"\\ud800\"}", "{\"jti\":\"\\udc00x\"}",
            "{\"jti\":\"\\ud800\\u0041\"}", "{\"jti\":\"a\" \"htm\":\"b\"}", "{\"jti\" \"a\"}", "{\"x\":tru}", "{\"x\":[1,]}",
            "{\"x\":{\"y\"}}", "{\"jti\":\"a\",\"jti\":\"a\"}", "{\"iat\":1,\"iat\":2}", "{\"nonce\":null,\"nonce\":\"n\"}",
            "{\"x\":" + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}",
        ]
        for text in refused {
            #expect(DPoPClaims.parse(Array(text.utf8)) == nil, "\(text)")
        }
        #expect(DPoPClaims.parse([0x7B, 0x22, 0x6A, 0xFF, 0x22, 0x3A, 0x31, 0x7D]) == nil, "invalid UTF-8")
        #expect(DPoPClaims.parse(Array("{}".utf8)) == DPoPClaims())
        #expect(DPoPClaims.parse(Array(#"{"jti":"a","x":{"jti":"nested","y":[{"iat":3}]},"iat":1.8e9}"#.utf8))
            == DPoPClaims(jti: "a", iat: 1_800_000_000))
        #expect(DPoPClaims.parse(Array(#"{"jti":"\ud83d\ude00\u00e9\n","iat":true,"htm":7}"#.utf8)) == DPoPClaims(jti: "😀é\n"))
    }
}
