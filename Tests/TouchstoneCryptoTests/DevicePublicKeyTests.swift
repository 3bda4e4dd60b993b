import Crypto
import Foundation
import Testing
import TouchstoneCrypto
import TouchstoneTesting
import _CryptoExtras

struct DevicePublicKeyTests {
    static let challenge = "dGhpcyBpcyBhIGNoYWxsZW5nZSBvZiB0aGlydHktdHdvIGJ5dGVz"

    struct FormatCase: CustomTestStringConvertible, Sendable {
        var algorithm: SignatureAlgorithm
        var keyEncoding: TestDeviceKey.KeyEncoding
        var signatureEncoding: TestDeviceKey.SignatureEncoding
        var standardBase64: Bool
        var testDescription: String {
            "\(algorithm.rawValue) key \(keyEncoding.rawValue) sig \(signatureEncoding.rawValue)\(standardBase64 ? " std-b64" : "")"
        }
    }

    static let formatCases: [FormatCase] = {
        var cases: [FormatCase] = []
        for encoding in [TestDeviceKey.KeyEncoding.spkiDER, .spkiPEM, .x963, .compressed] {
            for signature in TestDeviceKey.SignatureEncoding.allCases {
                cases.append(.init(algorithm: .es256, keyEncoding: encoding, signatureEncoding: signature, standardBase64: false))
            }
        }
        cases.append(.init(algorithm: .es256, keyEncoding: .x963, signatureEncoding: .der, standardBase64: true))
        for encoding in [TestDeviceKey.KeyEncoding.raw, .spkiDER, .spkiPEM] {
            cases.append(.init(algorithm: .eddsa, keyEncoding: encoding, signatureEncoding: .raw, standardBase64: false))
        }
        cases.append(.init(algorithm: .eddsa, keyEncoding: .raw, signatureEncoding: .raw, standardBase64: true))
        for encoding in [TestDeviceKey.KeyEncoding.spkiDER, .spkiPEM, .pkcs1DER, .pkcs1PEM] {
            cases.append(.init(algorithm: .rs256, keyEncoding: encoding, signatureEncoding: .raw, standardBase64: false))
        }
        return cases
    }()

    @Test(arguments: formatCases)
    func everyKeyAndSignatureEncodingVerifies(_ format: FormatCase) throws {
        let device = TestDeviceKey(format.algorithm)
        let key = try DevicePublicKey(
            encoded: device.publicKey(format.keyEncoding, standardBase64: format.standardBase64),
            algorithm: format.algorithm
        )
        let signature = device.signature(over: Self.challenge, encoding: format.signatureEncoding)
        #expect(key.isValidSignature(signature, for: Array(Self.challenge.utf8)))
        // Negative: the same signature over a tampered challenge.
        #expect(!key.isValidSignature(signature, for: Array((Self.challenge + "x").utf8)))
    }

    @Test(arguments: SignatureAlgorithm.allCases)
    func allEncodingsOfOneKeyHaveOneCanonicalForm(algorithm: SignatureAlgorithm) throws {
        let device = TestDeviceKey(algorithm)
        let keys = try device.keyEncodings.map { try DevicePublicKey(encoded: device.publicKey($0), algorithm: algorithm) }
        #expect(Set(keys.map(\.spkiDERRepresentation)).count == 1)
        #expect(Set(keys.map(\.fingerprint)).count == 1)
        #expect(keys[0].fingerprint.count == 64)
    }

    @Test(arguments: SignatureAlgorithm.allCases)
    func signatureByAnotherKeyIsRejected(algorithm: SignatureAlgorithm) throws {
        let registered = TestDeviceKey(algorithm)
        let other = TestDeviceKey(algorithm)
        let key = try DevicePublicKey(encoded: registered.publicKey(), algorithm: algorithm)
        #expect(!key.isValidSignature(other.signature(over: Self.challenge), for: Array(Self.challenge.utf8)))
    }

    @Test(arguments: SignatureAlgorithm.allCases)
    func malformedSignaturesAreRejectedNotTrapped(algorithm: SignatureAlgorithm) throws {
        let device = TestDeviceKey(algorithm)
        let key = try DevicePublicKey(encoded: device.publicKey(), algorithm: algorithm)
        let message = Array(Self.challenge.utf8)
        let good = device.signature(over: Self.challenge)
        var flipped = good
        flipped[flipped.count / 2] ^= 0x01
        for bad in [[], [0x30], Array(good.dropLast()), good + [0x00], flipped, [UInt8](repeating: 0, count: 64),
            [UInt8](repeating: 0xFF, count: 600)]
        {
            #expect(!key.isValidSignature(bad, for: message))
        }
    }

    @Test func ecdsaDERSignatureWithTrailingBytesIsRejected() throws {
        let device = TestDeviceKey(.es256)
        let key = try DevicePublicKey(encoded: device.publicKey(.x963), algorithm: .es256)
        let der = device.signature(over: Self.challenge, encoding: .der)
        #expect(key.isValidSignature(der, for: Array(Self.challenge.utf8)))
        #expect(!key.isValidSignature(der + [0x00], for: Array(Self.challenge.utf8)))
    }

    // MARK: Keys that must be refused

    @Test func truncatedSPKIIsRejected() {
        let spki = TestDeviceKey(.es256).publicKeyBytes(.spkiDER)
        for length in [1, 10, spki.count / 2, spki.count - 1] {
            #expect(throws: DeviceKeyError.self) { try DevicePublicKey(bytes: Array(spki.prefix(length)), algorithm: .es256) }
        }
    }

    @Test func spkiWithTrailingBytesIsRejected() {
        let spki = TestDeviceKey(.es256).publicKeyBytes(.spkiDER)
        #expect(throws: DeviceKeyError.self) { try DevicePublicKey(bytes: spki + [0x00], algorithm: .es256) }
    }

    @Test func pointNotOnTheCurveIsRejected() {
        var point = TestDeviceKey(.es256).publicKeyBytes(.x963)
        point[64] ^= 0x01  // change Y: (X, Y') is not on P-256
        #expect(throws: DeviceKeyError.invalidPublicKey("")) { try DevicePublicKey(bytes: point, algorithm: .es256) }
    }

    @Test func identityAndZeroPointsAreRejected() {
        let zeros = [0x04] + [UInt8](repeating: 0, count: 64)
        #expect(throws: DeviceKeyError.self) { try DevicePublicKey(bytes: zeros, algorithm: .es256) }
        #expect(throws: DeviceKeyError.self) { try DevicePublicKey(bytes: [0x00], algorithm: .es256) }
    }

    @Test func rsa1024IsRejectedAsWeak() throws {
        let weak = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
        #expect(throws: DeviceKeyError.weakKey("")) {
            try DevicePublicKey(bytes: [UInt8](weak.publicKey.derRepresentation), algorithm: .rs256)
        }
        #expect(throws: DeviceKeyError.weakKey("")) {
            try DevicePublicKey(bytes: [UInt8](weak.publicKey.pkcs1DERRepresentation), algorithm: .rs256)
        }
    }

    @Test(arguments: [[0x03], [0x01], [0x01, 0x00, 0x00], [0x01, 0x00, 0x01, 0x00, 0x01]] as [[UInt8]])
    func rsaWithUnsafeExponentIsRejected(exponent: [UInt8]) throws {
        // PKCS#1 RSAPublicKey { n, e } with a real 2048-bit modulus and the exponent under test.
        let modulus = [0x00] + [UInt8](repeating: 0xC5, count: 256)
        let sequence = der(0x30, der(0x02, modulus) + der(0x02, exponent))
        #expect(throws: DeviceKeyError.weakKey("")) { try DevicePublicKey(bytes: sequence, algorithm: .rs256) }
    }

    @Test func keyOfAnotherAlgorithmIsRejected() throws {
        let ed = TestDeviceKey(.eddsa).publicKeyBytes(.spkiDER)
        let ec = TestDeviceKey(.es256).publicKeyBytes(.spkiDER)
        #expect(throws: DeviceKeyError.algorithmMismatch("")) { try DevicePublicKey(bytes: ed, algorithm: .es256) }
        #expect(throws: DeviceKeyError.algorithmMismatch("")) { try DevicePublicKey(bytes: ec, algorithm: .eddsa) }
        #expect(throws: DeviceKeyError.algorithmMismatch("")) { try DevicePublicKey(bytes: ec, algorithm: .rs256) }
    }

    @Test func p384KeyIsRejectedForES256() {
        let p384 = [UInt8](P384.Signing.PrivateKey().publicKey.derRepresentation)
        #expect(throws: DeviceKeyError.algorithmMismatch("")) { try DevicePublicKey(bytes: p384, algorithm: .es256) }
    }

    @Test(arguments: ["", "not base64!", "-----BEGIN PUBLIC KEY-----\nAAAA\n", String(repeating: "A", count: 20_000)])
    func undecodableTextIsRejected(text: String) {
        #expect(throws: DeviceKeyError.self) { try DevicePublicKey(encoded: text, algorithm: .es256) }
    }

    @Test func overlongDERLengthIsRejected() {
        // SEQUENCE claiming 2^24-1 bytes with 3 present.
        #expect(throws: DeviceKeyError.self) {
            try DevicePublicKey(bytes: [0x30, 0x83, 0xFF, 0xFF, 0xFF, 0x01, 0x02, 0x03], algorithm: .rs256)
        }
        // Indefinite length.
        #expect(throws: DeviceKeyError.self) { try DevicePublicKey(bytes: [0x30, 0x80, 0x00, 0x00], algorithm: .rs256) }
    }
}

private func der(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
    var out: [UInt8] = [tag]
    if content.count < 0x80 {
        out.append(UInt8(content.count))
    } else if content.count <= 0xFF {
        out += [0x81, UInt8(content.count)]
    } else {
        out += [0x82, UInt8(content.count >> 8), UInt8(content.count & 0xFF)]
    }
    return out + content
}
