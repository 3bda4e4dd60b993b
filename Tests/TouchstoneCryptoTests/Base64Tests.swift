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

    @Test(arguments: ["-_+/AQ", "abc!", "A", "AQ=A", "a b", "é", "AQ=", "AQ===", "AAAA=", "AAAA==", "AAA==", "="])
    func rejectsInvalidText(text: String) {
        #expect(Base64.decode(text) == nil)
    }

    @Test func encodesURLAlphabetWithoutPadding() {
        #expect(Base64.urlEncode(Self.bytes) == "-_-_AQ")
        #expect(Base64.urlEncode([UInt8]()) == "")
    }

    @Test func roundTripsEveryLengthAndByteValue() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ length) }
            let encoded = Base64.urlEncode(bytes)
            // The same text Foundation's encoder gives, in the URL alphabet without padding.
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(encoded == foundation)
            #expect(Base64.decode(encoded) == bytes)
            #expect(Base64.urlDecodeCanonical(encoded) == bytes)
        }
        let all = (0...255).map { UInt8($0) }
        #expect(Base64.urlDecodeCanonical(Base64.urlEncode(all)) == all)
    }

    @Test(arguments: ["-_-_AQ==", "+/+/AQ", "-_-_AR", "-_-_A", "a b", "é"])
    func canonicalDecodingAcceptsOnlyWhatUrlEncodeProduces(text: String) {
        // Padding, the standard alphabet, non-zero unused bits ("AR" for 0x01), impossible lengths, foreign bytes.
        #expect(Base64.urlDecodeCanonical(text) == nil)
    }

    @Test func hexIsLowercaseTwoDigitsPerByte() {
        #expect(Hex.encode([0x00, 0x0F, 0xA0, 0xFF]) == "000fa0ff")
        #expect(Hex.encode([UInt8]()) == "")
    }

    @Test func enforcesDecodedLengthLimit() {
        let text = Base64.urlEncode([UInt8](repeating: 7, count: 100))
        #expect(Base64.decode(text, maxDecodedLength: 99) == nil)
        #expect(Base64.decode(text, maxDecodedLength: 100)?.count == 100)
    }
}
