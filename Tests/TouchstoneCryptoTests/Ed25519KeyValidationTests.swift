import Crypto
import Testing
import TouchstoneCrypto
import TouchstoneTesting

/// Ed25519 keys are refused unless they are canonical encodings of points of the prime-order subgroup.
struct Ed25519KeyValidationTests {
    @Test(arguments: Ed25519Vectors.smallOrder)
    func smallOrderPointsAreRefused(_ vector: Ed25519Vectors.Case) {
        #expect(throws: Ed25519KeyValidation.Failure.smallOrder) { try Ed25519KeyValidation.validate(vector.bytes) }
        // swift-crypto itself takes them: the check is ours.
        #expect((try? Curve25519.Signing.PublicKey(rawRepresentation: vector.bytes)) != nil)
    }

    @Test(arguments: Ed25519Vectors.nonCanonical)
    func nonCanonicalEncodingsAreRefused(_ vector: Ed25519Vectors.Case) {
        #expect(throws: Ed25519KeyValidation.Failure.nonCanonicalEncoding) { try Ed25519KeyValidation.validate(vector.bytes) }
    }

    @Test func pointsOutsideThePrimeOrderSubgroupAreRefused() {
        #expect(throws: Ed25519KeyValidation.Failure.notInPrimeOrderSubgroup) {
            try Ed25519KeyValidation.validate(Ed25519Vectors.mixedOrder.bytes)
        }
    }

    @Test func bytesThatAreNoPointAreRefused() {
        #expect(throws: Ed25519KeyValidation.Failure.notOnCurve) { try Ed25519KeyValidation.validate(Ed25519Vectors.notOnCurve.bytes) }
        #expect(throws: Ed25519KeyValidation.Failure.wrongLength) { try Ed25519KeyValidation.validate([UInt8](repeating: 9, count: 31)) }
    }

    @Test func realKeysAreAccepted() {
        #expect(Ed25519KeyValidation.isValid(Ed25519Vectors.valid.bytes))
        // Fresh keys from swift-crypto, both signs of x among them.
        for _ in 0..<64 {
            let key = Curve25519.Signing.PrivateKey().publicKey.rawRepresentation
            #expect(Ed25519KeyValidation.isValid(Array(key)), "\(Hex.encode(key))")
        }
    }

    @Test(arguments: Ed25519Vectors.allInvalid)
    func deviceKeysRefuseEveryInvalidPointRawAndSPKI(_ vector: Ed25519Vectors.Case) {
        for encoding in [vector.bytes, vector.spkiDER] {
            #expect(throws: DeviceKeyError.invalidPublicKey("")) { try DevicePublicKey(bytes: encoding, algorithm: .eddsa) }
        }
    }

    @Test func rsaKeysNeedAnOddModulus() {
        var modulus = [UInt8](repeating: 0xC3, count: 256)
        modulus[255] = 0x02
        #expect(throws: DeviceKeyError.invalidPublicKey("")) { try DevicePublicKey.checkRSA(modulus: modulus, exponent: [1, 0, 1]) }
        modulus[255] = 0x03
        #expect(throws: Never.self) { try DevicePublicKey.checkRSA(modulus: modulus, exponent: [1, 0, 1]) }
        #expect(throws: DeviceKeyError.weakKey("")) { try DevicePublicKey.checkRSA(modulus: modulus, exponent: [3]) }
        #expect(throws: DeviceKeyError.weakKey("")) { try DevicePublicKey.checkRSA(modulus: [0, 0] + modulus.dropFirst(8), exponent: [1, 0, 1]) }
    }
}
