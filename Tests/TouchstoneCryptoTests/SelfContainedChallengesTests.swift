import Crypto
import Testing

@testable import TouchstoneCrypto

struct SelfContainedChallengesTests {
    static let key = SymmetricKey(data: [UInt8](0..<32))
    static let nonce = [UInt8](100..<116)
    static let expiry: Int64 = 1_795_000_000_000
    static let binding = "3f2a0e1c-reg"

    /// The format as documented, checked against an independent implementation: the expected values were computed with
    /// Python's `hmac`/`hashlib` and the `cryptography` package's HKDF from the format's description.
    @Test func theFormatIsTheDocumentedOne() {
        let challenges = SelfContainedChallenges(key: Self.key)
        let issued = challenges.issue(for: Self.binding, expiresAtMillis: Self.expiry, nonce: Self.nonce)
        #expect(issued == "AQAAAaHuVl4AZGVmZ2hpamtsbW5vcHFyc8CLrh7t41XeByNO0t695CY")
        #expect(issued.count == SelfContainedChallenges.encodedLength)
        let derived = SelfContainedChallenges(
            derivingFrom: SymmetricKey(data: [UInt8](repeating: 9, count: 32)),
            purpose: "touchstone biometric sign-in challenge v1"
        )
        #expect(derived.issue(for: Self.binding, expiresAtMillis: Self.expiry, nonce: Self.nonce) == "AQAAAaHuVl4AZGVmZ2hpamtsbW5vcHFyc0-YwjW5par1GoaftzCccek")
    }

    @Test func aChallengeOpensOnlyForItsBindingUnderItsKey() {
        let challenges = SelfContainedChallenges(key: Self.key)
        let issued = challenges.issue(for: Self.binding, expiresAtMillis: Self.expiry, nonce: Self.nonce)
        #expect(challenges.expiry(of: issued, for: Self.binding) == Self.expiry)
        #expect(challenges.expiry(of: issued, for: Self.binding + "x") == nil)
        #expect(challenges.expiry(of: issued, for: "") == nil)
        #expect(SelfContainedChallenges(key: SymmetricKey(data: [UInt8](1..<33))).expiry(of: issued, for: Self.binding) == nil)
        // Keys derived for another purpose, or from another secret, are other keys.
        let secret = SymmetricKey(data: [UInt8](repeating: 9, count: 32))
        let derived = SelfContainedChallenges(derivingFrom: secret, purpose: "a")
        let fromDerived = derived.issue(for: Self.binding, expiresAtMillis: Self.expiry, nonce: Self.nonce)
        #expect(derived.expiry(of: fromDerived, for: Self.binding) == Self.expiry)
        #expect(SelfContainedChallenges(derivingFrom: secret, purpose: "b").expiry(of: fromDerived, for: Self.binding) == nil)
        #expect(SelfContainedChallenges(derivingFrom: Self.key, purpose: "a").expiry(of: fromDerived, for: Self.binding) == nil)
        // Expiries before 1970 and far ahead survive the round trip.
        for value: Int64 in [0, -1, .max, .min] {
            #expect(challenges.expiry(of: challenges.issue(for: "r", expiresAtMillis: value, nonce: Self.nonce), for: "r") == value)
        }
    }

    /// Every altered byte (the expiry pushed later, another nonce, another tag, another version) and every malformed
    /// text is refused.
    @Test func anythingAlteredOrMalformedIsRefused() throws {
        let challenges = SelfContainedChallenges(key: Self.key)
        let issued = challenges.issue(for: Self.binding, expiresAtMillis: Self.expiry, nonce: Self.nonce)
        let bytes = try #require(Base64.urlDecodeCanonical(issued))
        for index in bytes.indices {
            for flip: UInt8 in [0x01, 0x80] {
                var altered = bytes
                altered[index] ^= flip
                #expect(challenges.expiry(of: Base64.urlEncode(altered), for: Self.binding) == nil)
            }
        }
        let malformed = [
            "", String(issued.dropLast()), issued + "A", issued + "=", " " + issued, String(repeating: "A", count: 55),
            Base64.urlEncode(bytes + [0]), Base64.urlEncode(Array(bytes.dropLast())),
        ]
        for text in malformed {
            #expect(challenges.expiry(of: text, for: Self.binding) == nil)
        }
    }

    @Test func noncesMakeChallengesDistinct() {
        let challenges = SelfContainedChallenges(key: Self.key)
        let values = Set((0..<64).map { index in
            challenges.issue(for: Self.binding, expiresAtMillis: Self.expiry, nonce: [UInt8](repeating: UInt8(index), count: 16))
        })
        #expect(values.count == 64)
    }
}
