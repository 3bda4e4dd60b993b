import Crypto
import Foundation
import Testing
import TouchstoneCrypto

/// `ECDSASignatureEncoding.rawFromDER` replaces swift-crypto's DER parse on the verification paths; it must accept
/// exactly what swift-crypto accepts, and read it the same way.
struct ECDSASignatureEncodingTests {
    /// swift-crypto's reading of `der` as a signature on the curve with `scalarLength`-byte scalars.
    static func swiftCrypto(_ der: [UInt8], scalarLength: Int) -> [UInt8]? {
        switch scalarLength {
        case 32: (try? P256.Signing.ECDSASignature(derRepresentation: der)).map { Array($0.rawRepresentation) }
        case 48: (try? P384.Signing.ECDSASignature(derRepresentation: der)).map { Array($0.rawRepresentation) }
        default: (try? P521.Signing.ECDSASignature(derRepresentation: der)).map { Array($0.rawRepresentation) }
        }
    }

    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    /// Real signatures of each curve (short scalars, whose leading zero bytes DER drops, are in `readsSmallScalars`).
    static func signatures(scalarLength: Int, count: Int) throws -> [[UInt8]] {
        let message = Array("a challenge".utf8)
        return try (0..<count).map { index in
            let data = message + [UInt8(index & 0xFF)]
            switch scalarLength {
            case 32: return Array(try P256.Signing.PrivateKey().signature(for: data).derRepresentation)
            case 48: return Array(try P384.Signing.PrivateKey().signature(for: data).derRepresentation)
            default: return Array(try P521.Signing.PrivateKey().signature(for: data).derRepresentation)
            }
        }
    }

    // These tests are CPU-bound and run in parallel with the rest of the suite on a cooperative pool as wide as the
    // machine has cores: they stay small and yield now and then, so that other tests' tasks are not starved.

    @Test(arguments: [32, 48, 66])
    func readsRealSignaturesAsSwiftCryptoDoes(scalarLength: Int) async throws {
        for der in try Self.signatures(scalarLength: scalarLength, count: 24) {
            let raw = ECDSASignatureEncoding.rawFromDER(der, scalarLength: scalarLength)
            #expect(raw != nil)
            #expect(raw == Self.swiftCrypto(der, scalarLength: scalarLength))
            #expect(raw?.count == 2 * scalarLength)
            await Task.yield()
        }
    }

    /// Single-byte changes (every value at the tag and length bytes, a few at the others), truncations, removals and
    /// insertions of real signatures: accepted exactly when swift-crypto accepts, with the same scalars.
    @Test(arguments: [32, 48, 66])
    func agreesWithSwiftCryptoOnMutations(scalarLength: Int) async throws {
        var generator = SystemRandomNumberGenerator()
        var checked = 0
        var accepted = 0
        for der in try Self.signatures(scalarLength: scalarLength, count: 2) {
            // SEQUENCE tag and length (long form past 127 bytes), then each INTEGER's tag and length.
            let sequenceHeader = der[1] == 0x81 ? 3 : 2
            let rLength = Int(der[sequenceHeader + 1])
            let structural: Set<Int> = [0, 1, 2, sequenceHeader, sequenceHeader + 1, sequenceHeader + 2 + rLength, sequenceHeader + 3 + rLength]
            var variants: [[UInt8]] = []
            for index in der.indices {
                let values: [UInt8] = structural.contains(index)
                    ? Array(0...255) : [0x00, 0x01, 0x7F, 0x80, 0xFF, UInt8.random(in: 0...255, using: &generator)]
                for value in values where value != der[index] {
                    var variant = der
                    variant[index] = value
                    variants.append(variant)
                }
                variants.append(Array(der[..<index]))
                var removed = der
                removed.remove(at: index)
                variants.append(removed)
                var inserted = der
                inserted.insert(0x00, at: index)
                variants.append(inserted)
            }
            variants.append(der + [0x00])
            for variant in variants {
                let ours = ECDSASignatureEncoding.rawFromDER(variant, scalarLength: scalarLength)
                let theirs = Self.swiftCrypto(variant, scalarLength: scalarLength)
                #expect(ours == theirs, "\(Hex.encode(variant))")
                checked += 1
                if ours != nil { accepted += 1 }
                if checked % 256 == 0 { await Task.yield() }
            }
        }
        // Both outcomes were exercised.
        #expect(checked > 1000)
        #expect(accepted > 0 && accepted < checked)
    }

    @Test(arguments: [
        // (DER, what it is)
        ("3006020101020102", "r = 1, s = 2"),
        ("300702020080020102", "a scalar with its sign byte"),
    ])
    func readsSmallScalars(hex: String, _: String) throws {
        let raw = try #require(ECDSASignatureEncoding.rawFromDER(Self.bytes(hex), scalarLength: 32))
        #expect(raw.count == 64)
        #expect(raw == Self.swiftCrypto(Self.bytes(hex), scalarLength: 32))
    }

    @Test(arguments: [
        ("", "empty"),
        ("30", "no length"),
        ("3080020101020102", "indefinite length"),
        ("308106020101020102", "long form for a short length"),
        ("3006020101020102ff", "trailing bytes"),
        ("3007020101020102", "length past the end"),
        ("30060201ff020102", "negative r"),
        ("300702020001020102", "non-minimal integer"),
        ("3004020101020102", "sequence shorter than its integers"),
        ("3003020101", "one integer"),
        ("3006040101020102", "not an integer"),
        ("300402000200", "empty integers"),
    ])
    func refusesMalformed(hex: String, _: String) {
        let bytes = Self.bytes(hex)
        #expect(ECDSASignatureEncoding.rawFromDER(bytes, scalarLength: 32) == nil)
        #expect(Self.swiftCrypto(bytes, scalarLength: 32) == nil)
    }

    @Test func refusesAScalarLongerThanTheCurve() {
        // r of 33 significant bytes.
        let der: [UInt8] = [0x30, 0x26, 0x02, 0x21] + [UInt8](repeating: 0x01, count: 33) + [0x02, 0x01, 0x01]
        #expect(ECDSASignatureEncoding.rawFromDER(der, scalarLength: 32) == nil)
        #expect(ECDSASignatureEncoding.rawFromDER(der, scalarLength: 48) != nil)
    }
}
