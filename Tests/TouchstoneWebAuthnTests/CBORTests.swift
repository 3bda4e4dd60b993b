import Testing

@testable import TouchstoneWebAuthn

struct CBORTests {
    @Test func roundTripsEveryKind() throws {
        let item = CBOR.map([
            .int(1): .int(2), .int(-1): .int(-300), .text("bytes"): .bytes([0, 1, 255]),
            .text("list"): .array([.bool(true), .bool(false), .null, .text("é")]),
            .text("big"): .unsigned(UInt64.max), .text("tag"): .tagged(24, .bytes([1])),
        ])
        let encoded = CBOREncoder.encode(item)
        let decoded = try CBORDecoder().decode(encoded)
        #expect(CBOREncoder.encode(decoded) == encoded)
        #expect(decoded.mapValue?[int: -1]?.intValue == -300)
        #expect(decoded.mapValue?[text: "big"] == .unsigned(UInt64.max))
    }

    @Test func encodesCanonically() {
        // CTAP2 order: shorter encoded keys first, then bytewise.
        let map = CBOR.map([.text("aa"): .int(1), .int(-1): .int(2), .int(3): .int(3), .text("b"): .int(4)])
        #expect(CBOREncoder.encode(map) == [0xA4, 0x03, 0x03, 0x20, 0x02, 0x61, 0x62, 0x04, 0x62, 0x61, 0x61, 0x01])
        #expect(CBOREncoder.encode(.unsigned(23)) == [0x17])
        #expect(CBOREncoder.encode(.unsigned(24)) == [0x18, 24])
        #expect(CBOREncoder.encode(.unsigned(65536)) == [0x1A, 0, 1, 0, 0])
    }

    @Test(arguments: [
        ([0x5F, 0x41, 0x00, 0xFF], CBORError.indefiniteLength),  // indefinite byte string
        ([0x9F, 0x01, 0xFF], .indefiniteLength),  // indefinite array
        ([0xBF, 0x01, 0x02, 0xFF], .indefiniteLength),  // indefinite map
        ([0x58, 0x10, 0x01], .truncated),  // 16 bytes announced, 1 present
        ([0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], .truncated),  // 2^64-1 byte string
        ([0x9B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], .truncated),  // 2^64-1 elements
        ([0xBB, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00], .truncated),  // 2^32 pairs
        ([0xA2, 0x01, 0x02, 0x01, 0x03], .duplicateMapKey),
        ([0x62, 0xC3, 0x28], .invalidUTF8),
        ([0x01, 0x02], .trailingBytes),
        ([0x1C], .reservedValue),
        ([0xF8, 0x10], .reservedValue),
        ([], .truncated),
    ] as [([UInt8], CBORError)])
    func rejectsHostileInput(bytes: [UInt8], expected: CBORError) {
        #expect(throws: expected) { try CBORDecoder().decode(bytes) }
    }

    @Test func rejectsDeepNesting() {
        let deep = [UInt8](repeating: 0x81, count: 10_000) + [0x00]
        #expect(throws: CBORError.tooDeep) { try CBORDecoder().decode(deep) }
    }

    @Test func rejectsTooManyItems() {
        let wide = [0x99, 0x27, 0x10] + [UInt8](repeating: 0x00, count: 10_000)  // array of 10,000 zeros
        #expect(throws: CBORError.tooManyItems) { try CBORDecoder().decode(wide) }
    }

    @Test func decodesFloatsAndSimpleValues() throws {
        #expect(try CBORDecoder().decode([0xF9, 0x3C, 0x00]) == .float(1.0))  // half
        #expect(try CBORDecoder().decode([0xF9, 0xC4, 0x00]) == .float(-4.0))
        #expect(try CBORDecoder().decode([0xFA, 0x47, 0xC3, 0x50, 0x00]) == .float(100000.0))  // single
        #expect(try CBORDecoder().decode([0xF7]) == .undefined)
        #expect(try CBORDecoder().decode([0xF0]) == .simple(16))
    }

    @Test func decodePrefixReportsWhatItConsumed() throws {
        let (item, consumed) = try CBORDecoder().decodePrefix([0x82, 0x01, 0x02, 0xFF, 0xFF][...])
        #expect(item == .array([.int(1), .int(2)]))
        #expect(consumed == 3)
    }
}
