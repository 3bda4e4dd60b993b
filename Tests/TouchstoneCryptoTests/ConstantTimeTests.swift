import Testing
import TouchstoneCrypto

struct ConstantTimeTests {
    @Test func equalityOfBytes() {
        #expect(ConstantTime.equal([1, 2, 3], [1, 2, 3]))
        #expect(ConstantTime.equal([UInt8](), [UInt8]()))
        #expect(!ConstantTime.equal([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equal([0, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equal([1, 2, 3], [1, 2]))
        #expect(ConstantTime.equal([9, 1, 2, 3][1...], [1, 2, 3]))
        // Every single-bit difference anywhere is seen.
        let base = [UInt8](repeating: 0xA5, count: 32)
        for index in base.indices {
            for bit in 0..<8 {
                var other = base
                other[index] ^= 1 << bit
                #expect(!ConstantTime.equal(base, other))
            }
        }
    }
}
