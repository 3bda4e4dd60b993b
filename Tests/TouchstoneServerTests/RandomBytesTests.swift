import Testing
@testable import TouchstoneServer

/// The live dependencies' random bytes: the length asked for, different every time, every byte value possible.
@Suite struct RandomBytesTests {
    @Test(arguments: [0, 1, 8, 12, 16, 32, 255, 256, 257, 1000])
    func aValueHasTheLengthAskedFor(count: Int) {
        #expect(systemRandomBytes(count).count == count)
        #expect(TouchstoneDependencies.live.randomBytes(count).count == count)
    }

    @Test func valuesDifferAndCoverEveryByte() {
        // Two 32-byte values are equal with probability 2^-256; a fixed or zeroed buffer would fail at once.
        let values = (0..<64).map { _ in systemRandomBytes(32) }
        #expect(Set(values).count == 64)
        // 8,192 bytes miss one of the 256 values with probability about 256 · e^-32: never, unless the bytes are not
        // random (a chunk left unfilled past 256 bytes would show as too many zeros).
        let large = systemRandomBytes(8192)
        #expect(Set(large).count == 256)
        #expect(large.filter { $0 == 0 }.count < 100)
    }
}
