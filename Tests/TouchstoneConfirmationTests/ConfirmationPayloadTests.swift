import Crypto
import Foundation
import Testing
import TouchstoneConfirmation
import TouchstoneCrypto

struct ConfirmationPayloadTests {
    static let payload = ConfirmationPayload(
        confirmationId: "c-1",
        challenge: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8",
        rpId: "bank.example",
        userId: "u-1",
        summary: "Pay €120.00 to ACME Ltd",
        details: ["amount": .string("120.00"), "currency": .string("EUR"), "payee": .object(["name": .string("ACME Ltd"), "iban": .string("DE89370400440532013000")])],
        expiresAt: "2026-11-23T21:50:52Z"
    )

    @Test func thePayloadIsDocumentedByteForByte() {
        #expect(
            Self.payload.text
                == #"{"challenge":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8","confirmationId":"c-1","details":{"amount":"120.00","currency":"EUR","payee":{"iban":"DE89370400440532013000","name":"ACME Ltd"}},"expiresAt":"2026-11-23T21:50:52Z","rpId":"bank.example","summary":"Pay €120.00 to ACME Ltd","userId":"u-1","version":1}"#
        )
        #expect(Self.payload.bytes == Array(Self.payload.text.utf8))
    }

    @Test func aPayloadReadsBackOnlyInCanonicalForm() throws {
        #expect(try ConfirmationPayload(text: Self.payload.text) == Self.payload)
        // The same content with white space, or keys in another order, is not the signed text.
        let spaced = Self.payload.text.replacingOccurrences(of: ",\"userId\"", with: ", \"userId\"")
        #expect(throws: JSONInputError.self) { try ConfirmationPayload(text: spaced) }
        #expect(throws: JSONInputError.self) { try ConfirmationPayload(text: #"{"version":2}"#) }
    }

    @Test(arguments: [
        "", String(repeating: "x", count: 201), "Pay\u{0000}", "Pay\u{0085}", "Pay \u{202E}dlroW", "Pay\u{2066}x", "Line\u{2028}two", "Tab\there",
    ])
    func summariesThatAreRefused(summary: String) {
        #expect(throws: JSONInputError.self) { try ConfirmationText.summary(summary) }
    }

    @Test func summariesThatAreKeptAsSent() throws {
        #expect(try ConfirmationText.summary("Zahle 120,00 € an Müller & Söhne") == "Zahle 120,00 € an Müller & Söhne")
        #expect(try ConfirmationText.summary(String(repeating: "é", count: 200)).count == 200)
        // Not normalised: the decomposed form stays decomposed.
        #expect(try ConfirmationText.summary("e\u{0301}").unicodeScalars.count == 2)
    }

    @Test func detailsRules() throws {
        #expect(throws: JSONInputError.self) { try ConfirmationText.details(.null) }
        #expect(throws: JSONInputError.self) { try ConfirmationText.details(.array([])) }
        #expect(throws: JSONInputError.self) { try ConfirmationText.details(.object(["k": .string("bidi \u{202E}")])) }
        #expect(throws: JSONInputError.self) { try ConfirmationText.details(.object(["k\u{0007}": .string("bell key")])) }
        var deep = JSONValue.object([:])
        for _ in 0..<7 { deep = .object(["n": deep]) }
        #expect(try ConfirmationText.details(deep).count == 1)  // eight levels
        #expect(throws: JSONInputError.self) { try ConfirmationText.details(.object(["n": deep])) }  // nine
        #expect(try ConfirmationText.details(.object(["s": .string(String(repeating: "a", count: 4088))])).count == 1)
        #expect(throws: JSONInputError.self) { try ConfirmationText.details(.object(["s": .string(String(repeating: "a", count: 4089))])) }
    }

    @Test func deviceKeyEvidenceVerifiesAndEveryChangeBreaksIt() throws {
        let key = P256.Signing.PrivateKey()
        let signature = try key.signature(for: Self.payload.bytes)
        let evidence = ConfirmationEvidence(
            confirmationId: "c-1",
            payload: Self.payload.text,
            method: "biometric",
            algorithm: "ES256",
            publicKey: Base64.urlEncode(Array(key.publicKey.derRepresentation)),
            signature: Base64.urlEncode(Array(signature.derRepresentation)),
            registrationId: "r-1",
            approvedAt: "2026-11-23T21:49:00.000Z"
        )
        #expect(try evidence.verify().payload.summary == "Pay €120.00 to ACME Ltd")
        var otherPayload = evidence
        otherPayload.payload = otherPayload.payload.replacingOccurrences(of: "120.00", with: "920.00")
        otherPayload.payloadSha256 = ConfirmationEvidence.sha256(otherPayload.payload)
        #expect(throws: ConfirmationEvidence.Failure.self) { try otherPayload.verify() }
        var otherId = evidence
        otherId.confirmationId = "c-2"
        #expect(throws: ConfirmationEvidence.Failure.self) { try otherId.verify() }
        var otherKey = evidence
        otherKey.publicKey = Base64.urlEncode(Array(P256.Signing.PrivateKey().publicKey.derRepresentation))
        #expect(throws: ConfirmationEvidence.Failure.self) { try otherKey.verify() }
    }
}
