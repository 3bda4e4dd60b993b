import Foundation
import Testing
import TouchstoneCrypto

struct Base64Tests {
    // 0xFB 0xFF 0xBF encodes to "+/+/" in standard base64 and "-_-_" in base64url.
    static let bytes: [UInt8] = [0xFB, 0xFF, 0xBF, 0x01]

    @Test(arguments: ["-_-_AQ", "-_-_AQ==", "+/+/AQ", "+/+/AQ==", "  -_-_AQ\n"])
    func acceptsBothAlphabetsWithOrWithoutPadding(text: String) {
        #expect(Base64.decode(text) == Self.bytes)
    }

    @Test(arguments: ["-_+/AQ", "abc!", "A", "AQ=A", "a b", "é"])
    func rejectsInvalidText(text: String) {
        #expect(Base64.decode(text) == nil)
    }

    @Test func encodesURLAlphabetWithoutPadding() {
        #expect(Base64.urlEncode(Self.bytes) == "-_-_AQ")
        #expect(Base64.urlEncode([UInt8]()) == "")
    }

    @Test func enforcesDecodedLengthLimit() {
        let text = Base64.urlEncode([UInt8](repeating: 7, count: 100))
        #expect(Base64.decode(text, maxDecodedLength: 99) == nil)
        #expect(Base64.decode(text, maxDecodedLength: 100)?.count == 100)
    }
}
