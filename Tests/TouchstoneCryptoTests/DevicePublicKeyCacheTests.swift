import Crypto
import Testing
import TouchstoneCrypto

struct DevicePublicKeyCacheTests {
    private func spki() -> [UInt8] { [UInt8](P256.Signing.PrivateKey().publicKey.derRepresentation) }

    @Test func returnsTheSameKeyAsParsing() throws {
        let cache = DevicePublicKeyCache(capacity: 10)
        let bytes = self.spki()
        let first = try cache.key(bytes: bytes, algorithm: .es256)
        let second = try cache.key(bytes: bytes, algorithm: .es256)
        #expect(first == (try DevicePublicKey(bytes: bytes, algorithm: .es256)))
        #expect(second == first)
        #expect(cache.count == 1)
    }

    @Test func theAlgorithmIsPartOfTheKey() throws {
        // The same bytes under another algorithm are parsed (and refused) anew, never served from the cache.
        let cache = DevicePublicKeyCache(capacity: 10)
        let bytes = self.spki()
        _ = try cache.key(bytes: bytes, algorithm: .es256)
        #expect(throws: DeviceKeyError.self) { try cache.key(bytes: bytes, algorithm: .eddsa) }
    }

    @Test func invalidKeysAreRefusedAndNotCached() {
        let cache = DevicePublicKeyCache(capacity: 10)
        #expect(throws: DeviceKeyError.self) { try cache.key(bytes: [0x04] + [UInt8](repeating: 1, count: 64), algorithm: .es256) }
        #expect(cache.count == 0)
    }

    @Test func neverHoldsMoreThanItsCapacity() throws {
        let cache = DevicePublicKeyCache(capacity: 8)
        let keys = (0..<40).map { _ in self.spki() }
        for bytes in keys { _ = try cache.key(bytes: bytes, algorithm: .es256) }
        #expect(cache.count <= 8)
        // The most recent keys are still there; the oldest are gone.
        let recent = try cache.key(bytes: keys[39], algorithm: .es256)
        #expect(recent == (try DevicePublicKey(bytes: keys[39], algorithm: .es256)))
        #expect(cache.count <= 8)
    }

    @Test func aKeyInUseSurvivesGenerations() throws {
        let cache = DevicePublicKeyCache(capacity: 4)
        let hot = self.spki()
        _ = try cache.key(bytes: hot, algorithm: .es256)
        for _ in 0..<20 {
            _ = try cache.key(bytes: self.spki(), algorithm: .es256)
            _ = try cache.key(bytes: hot, algorithm: .es256)  // used between every new key: moved forward each time
        }
        #expect(cache.count <= 4)
        #expect(cache.containsKey(bytes: hot, algorithm: .es256))
    }

    @Test func capacityZeroCachesNothing() throws {
        let cache = DevicePublicKeyCache(capacity: 0)
        let bytes = self.spki()
        _ = try cache.key(bytes: bytes, algorithm: .es256)
        #expect(cache.count == 0)
        #expect(!cache.containsKey(bytes: bytes, algorithm: .es256))
    }

    @Test func setReplacesAndCachedValueLooksUpWithoutParsing() {
        let cache = ParsedValueCache<String, Int>(capacity: 4)
        #expect(cache.cachedValue(for: "a") == nil)
        cache.set(1, for: "a")
        #expect(cache.cachedValue(for: "a") == 1)
        cache.set(2, for: "a")
        #expect(cache.cachedValue(for: "a") == 2)
        #expect(cache.count == 1)
        // A value moved to the previous generation and set again is held once, with the new value.
        cache.set(3, for: "b")
        cache.set(4, for: "c")
        cache.set(5, for: "a")
        #expect(cache.count <= 4)
        #expect(cache.cachedValue(for: "a") == 5)
        for index in 0..<20 { cache.set(index, for: "k\(index)") }
        #expect(cache.count <= 4)
        #expect(cache.cachedValue(for: "k19") == 19)
        #expect(cache.cachedValue(for: "b") == nil)

        let off = ParsedValueCache<String, Int>(capacity: 0)
        off.set(1, for: "a")
        #expect(off.cachedValue(for: "a") == nil)
    }
}
