import Foundation
import Testing
import TouchstoneConfirmation

/// The canonical JSON vectors both SDKs are held to (`Fixtures/canonical-json.json`; the Android SDK's
/// `CanonicalJsonTests` reads the same file): the server's serialiser must give each document's canonical text, and
/// each number's ECMAScript form.
struct SharedCanonicalVectorsTests {
    struct Vectors: Decodable {
        struct Number: Decodable {
            var bits: String
            var text: String
        }
        struct Document: Decodable {
            var name: String
            var json: String
            var canonical: String
        }
        var numbers: [Number]
        var documents: [Document]
    }

    static let vectors: Vectors = {
        let url = Bundle.module.url(forResource: "Fixtures/canonical-json", withExtension: "json")!
        return try! JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
    }()

    @Test func numbersAreWrittenAsTheVectorsSay() throws {
        #expect(Self.vectors.numbers.count >= 30)
        for number in Self.vectors.numbers {
            let value = Double(bitPattern: try #require(UInt64(number.bits, radix: 16)))
            #expect(CanonicalJSON.number(value) == number.text, "\(number.bits)")
        }
    }

    @Test func documentsSerialiseToTheirCanonicalText() throws {
        #expect(Self.vectors.documents.count >= 8)
        for document in Self.vectors.documents {
            let value = try StrictJSONParser().parse(Array(document.json.utf8))
            #expect(CanonicalJSON.string(value) == document.canonical, "\(document.name)")
        }
    }
}
