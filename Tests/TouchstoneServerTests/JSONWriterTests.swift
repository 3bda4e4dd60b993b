import Foundation
import NIOCore
import Testing
@testable import TouchstoneServer
import TouchstoneConfirmation
import TouchstoneStore
import TouchstoneTesting

/// The sign-in's answers are written without JSONEncoder: the JSON must be the same value JSONEncoder gives.
@Suite struct JSONWriterTests {
    /// Characters that need escaping and characters that must pass as they are: every control character, quote,
    /// backslash, slash, DEL, two- to four-byte UTF-8, a combining mark, U+2028/U+2029 and a byte-order mark.
    static let alphabet: [Character] =
        (0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }
        + ["\"", "\\", "/", "\u{7F}", "a", "Z", "0", " ", "é", "€", "😀", "e\u{301}", "\u{2028}", "\u{2029}", "\u{FEFF}", "ß"]

    static func text(_ generator: inout SplitMix) -> String {
        String((0..<Int.random(in: 0...12, using: &generator)).map { _ in Self.alphabet.randomElement(using: &generator)! })
    }

    /// Both encodings, parsed: equal values.
    func expectSameJSON<T: JSONWritable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var writer = JSONWriter()
        value.writeJSON(to: &writer)
        let written = Data(writer.buffer.readableBytesView)
        let encoded = try JSONEncoder().encode(value)
        // The strict parser: valid UTF-8, no duplicate member, nothing after the value.
        let parsedWritten = try StrictJSONParser().parse(written)
        let parsedEncoded = try StrictJSONParser().parse(encoded)
        #expect(parsedWritten == parsedEncoded, "\(String(decoding: written, as: UTF8.self))", sourceLocation: sourceLocation)
        #expect(!written.contains { $0 < 0x20 }, sourceLocation: sourceLocation)
    }

    @Test func signInAnswersAreTheJSONEncoderValue() throws {
        var generator = SplitMix(state: 18)
        for _ in 0..<300 {
            let date = Date(timeIntervalSince1970: 1_790_000_000)
            var user = UserResource(UserRecord(id: "", email: "", displayName: nil, passwordHash: "", createdAt: date))
            user.id = Self.text(&generator)
            user.email = Self.text(&generator)
            user.displayName = Bool.random(using: &generator) ? nil : Self.text(&generator)
            user.createdAt = Self.text(&generator)
            let record = SessionRecord(
                tokenHash: "", userId: "", createdAt: date, expiresAt: date, idleExpiresAt: date, authenticatedAt: date,
                strongAuthenticatedAt: nil, methods: []
            )
            var session = SessionResource(token: Self.text(&generator), record: record)
            session.expiresAt = Self.text(&generator)
            session.idleExpiresAt = Self.text(&generator)
            session.authenticatedAt = Self.text(&generator)
            session.methods = (0..<Int.random(in: 0...3, using: &generator)).map { _ in Self.text(&generator) }
            try self.expectSameJSON(SignedIn(user: user, session: session))
            try self.expectSameJSON(
                ChallengeResponse(registrationId: Self.text(&generator), challenge: Self.text(&generator), expiresAt: Self.text(&generator))
            )
            try self.expectSameJSON(
                RequestOptionsJSON(
                    challenge: Self.text(&generator),
                    timeout: Int.random(in: -1...999_999_999_999_999, using: &generator),
                    rpId: Self.text(&generator),
                    allowCredentials: (0..<Int.random(in: 0...3, using: &generator)).map { _ in .init(id: Self.text(&generator)) },
                    userVerification: Self.text(&generator),
                    hints: Bool.random(using: &generator) ? nil : (0..<Int.random(in: 0...3, using: &generator)).map { _ in Self.text(&generator) }
                )
            )
        }
    }

    @Test func writesCompactJSONInDeclarationOrder() {
        var writer = JSONWriter()
        ChallengeResponse(registrationId: "r\"1\\", challenge: "a\n\t\u{1}\u{1F}/é", expiresAt: "2026-11-24T12:00:00Z").writeJSON(to: &writer)
        #expect(
            String(buffer: writer.buffer)
                == #"{"registrationId":"r\"1\\","challenge":"a\n\t\u0001\u001f/é","expiresAt":"2026-11-24T12:00:00Z"}"#
        )
        var options = JSONWriter()
        RequestOptionsJSON(challenge: "c", timeout: 60000, rpId: "example.com", allowCredentials: [], userVerification: "required", hints: nil)
            .writeJSON(to: &options)
        #expect(
            String(buffer: options.buffer)
                == #"{"challenge":"c","timeout":60000,"rpId":"example.com","allowCredentials":[],"userVerification":"required"}"#
        )
    }
}
