/// A QR code (ISO/IEC 18004) of a short text, in byte mode at error-correction level M, versions 1 to 20 (up to 666
/// bytes): what a sign-in page shows for a phone to scan (issue #34).
///
/// ```swift
/// let code = try QRCode(text: "touchstone://sign-in?request=...")
/// let svg = code.svg()          // or code.isDark(row:column:)
/// ```
///
/// The steps follow the standard's: encode the data (§7.4), add Reed–Solomon error correction per block and
/// interleave (§7.5–7.6), place the function patterns and the data (§7.7), choose the mask with the lowest penalty
/// (§7.8), write the format and version information (§7.9–7.10).
public struct QRCode: Sendable, Hashable {
    /// Why a text cannot be encoded.
    public struct TooLong: Error, Sendable, Hashable {
        public let bytes: Int

        public init(bytes: Int) { self.bytes = bytes }
    }

    /// 1–20.
    public let version: Int
    /// 0–7.
    public let mask: Int
    /// Modules per side: 17 + 4 × version.
    public var size: Int { 17 + 4 * self.version }
    private let modules: [Bool]

    /// Whether the module at `row`, `column` is dark (0-based, from the top left; no quiet zone).
    public func isDark(row: Int, column: Int) -> Bool { self.modules[row * self.size + column] }

    /// The largest text, in UTF-8 bytes.
    public static let maximumBytes = 666

    /// Encodes `text` in the smallest version that holds it.
    ///
    /// - Parameter mask: A mask pattern to use (0–7) instead of the one with the lowest penalty (for test vectors).
    public init(text: String, mask forcedMask: Int? = nil) throws(TooLong) {
        let bytes = Array(text.utf8)
        guard let version = (1...20).first(where: { Self.capacity($0) >= bytes.count }) else { throw TooLong(bytes: bytes.count) }
        self.version = version
        let codewords = Self.codewords(bytes, version: version)
        var grid = Grid(version: version)
        grid.placeFunctionPatterns()
        grid.placeData(codewords)
        let mask = forcedMask ?? (0..<8).min { grid.masked($0).penalty() < grid.masked($1).penalty() } ?? 0
        self.mask = mask
        self.modules = grid.masked(mask).modules
    }

    /// The code as SVG: one path of dark squares on white, with the standard 4-module quiet zone.
    public func svg(moduleSize: Int = 6, title: String = "QR code") -> String {
        let side = (self.size + 8) * moduleSize
        var path = ""
        // One rectangle per horizontal run of dark modules.
        for row in 0..<self.size {
            var column = 0
            while column < self.size {
                guard self.isDark(row: row, column: column) else {
                    column += 1
                    continue
                }
                var end = column
                while end < self.size && self.isDark(row: row, column: end) { end += 1 }
                let width = (end - column) * moduleSize
                path += "M\((column + 4) * moduleSize) \((row + 4) * moduleSize)h\(width)v\(moduleSize)h-\(width)z"
                column = end
            }
        }
        var escaped = ""
        for character in title {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            default: escaped.append(character)
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" width="\(side)" height="\(side)" role="img" \
            shape-rendering="crispEdges"><title>\(escaped)</title><rect width="100%" height="100%" fill="#fff"/>\
            <path d="\(path)" fill="#000"/></svg>
            """
    }

    // MARK: Data and error correction (§7.4-7.6)

    /// Level M's block structure: error-correction codewords per block, then (blocks, data codewords each) groups.
    static let blocks: [(ec: Int, groups: [(count: Int, data: Int)])] = [
        (10, [(1, 16)]), (16, [(1, 28)]), (26, [(1, 44)]), (18, [(2, 32)]), (24, [(2, 43)]),
        (16, [(4, 27)]), (18, [(4, 31)]), (22, [(2, 38), (2, 39)]), (22, [(3, 36), (2, 37)]), (26, [(4, 43), (1, 44)]),
        (30, [(1, 50), (4, 51)]), (22, [(6, 36), (2, 37)]), (22, [(8, 37), (1, 38)]), (24, [(4, 40), (5, 41)]),
        (24, [(5, 41), (5, 42)]), (28, [(7, 45), (3, 46)]), (28, [(10, 46), (1, 47)]), (26, [(9, 43), (4, 44)]),
        (26, [(3, 44), (11, 45)]), (26, [(3, 41), (13, 42)]),
    ]

    static func dataCodewords(_ version: Int) -> Int { Self.blocks[version - 1].groups.reduce(0) { $0 + $1.count * $1.data } }

    /// Byte-mode capacity: the data bits less the mode indicator and the character count.
    static func capacity(_ version: Int) -> Int { (Self.dataCodewords(version) * 8 - 4 - Self.countBits(version)) / 8 }

    static func countBits(_ version: Int) -> Int { version < 10 ? 8 : 16 }

    /// The final sequence of codewords: data blocks and their error correction, interleaved.
    static func codewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        // Step 1: mode 0100 (byte), the count, the bytes, a terminator, padding to a byte, then 0xEC 0x11...
        var bits = BitBuffer()
        bits.append(0b0100, count: 4)
        bits.append(bytes.count, count: Self.countBits(version))
        for byte in bytes { bits.append(Int(byte), count: 8) }
        let capacityBits = Self.dataCodewords(version) * 8
        bits.append(0, count: min(4, capacityBits - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var data = bits.bytes
        var pad: UInt8 = 0xEC
        while data.count < Self.dataCodewords(version) {
            data.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        // Step 2: split into blocks, each with its Reed-Solomon codewords.
        let structure = Self.blocks[version - 1]
        var dataBlocks: [[UInt8]] = []
        var offset = 0
        for group in structure.groups {
            for _ in 0..<group.count {
                dataBlocks.append(Array(data[offset..<offset + group.data]))
                offset += group.data
            }
        }
        let generator = ReedSolomon.generator(degree: structure.ec)
        let ecBlocks = dataBlocks.map { ReedSolomon.remainder($0, generator: generator) }
        // Step 3: interleave, column by column.
        var result: [UInt8] = []
        let longest = dataBlocks.map(\.count).max() ?? 0
        for index in 0..<longest {
            for block in dataBlocks where index < block.count { result.append(block[index]) }
        }
        for index in 0..<structure.ec {
            for block in ecBlocks { result.append(block[index]) }
        }
        return result
    }

    struct BitBuffer {
        private(set) var count = 0
        private(set) var bytes: [UInt8] = []

        mutating func append(_ value: Int, count: Int) {
            for shift in stride(from: count - 1, through: 0, by: -1) {
                if self.count % 8 == 0 { self.bytes.append(0) }
                if (value >> shift) & 1 == 1 { self.bytes[self.bytes.count - 1] |= UInt8(0x80 >> (self.count % 8)) }
                self.count += 1
            }
        }
    }

    /// Reed-Solomon over GF(2^8) with the polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11D) and generator root 2.
    enum ReedSolomon {
        static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
            var result: UInt8 = 0
            var a = a, b = b
            while b != 0 {
                if b & 1 == 1 { result ^= a }
                let carry = a & 0x80
                a <<= 1
                if carry != 0 { a ^= 0x1D }
                b >>= 1
            }
            return result
        }

        /// The coefficients (highest degree first, the leading 1 left out) of (x - 2^0)(x - 2^1)...(x - 2^(degree-1)).
        static func generator(degree: Int) -> [UInt8] {
            var coefficients = [UInt8](repeating: 0, count: degree)
            coefficients[degree - 1] = 1
            var root: UInt8 = 1
            for _ in 0..<degree {
                for index in 0..<degree {
                    coefficients[index] = Self.multiply(coefficients[index], root)
                    if index + 1 < degree { coefficients[index] ^= coefficients[index + 1] }
                }
                root = Self.multiply(root, 2)
            }
            return coefficients
        }

        /// The remainder of data × x^degree divided by the generator: the error-correction codewords.
        static func remainder(_ data: [UInt8], generator: [UInt8]) -> [UInt8] {
            var remainder = [UInt8](repeating: 0, count: generator.count)
            for byte in data {
                let factor = byte ^ remainder.removeFirst()
                remainder.append(0)
                for index in generator.indices { remainder[index] ^= Self.multiply(generator[index], factor) }
            }
            return remainder
        }
    }

    // MARK: The matrix (§7.7-7.10)

    struct Grid {
        let version: Int
        let size: Int
        var modules: [Bool]
        /// Function modules: never data, never masked.
        var reserved: [Bool]

        init(version: Int) {
            self.version = version
            self.size = 17 + 4 * version
            self.modules = Array(repeating: false, count: self.size * self.size)
            self.reserved = Array(repeating: false, count: self.size * self.size)
        }

        subscript(row: Int, column: Int) -> Bool {
            get { self.modules[row * self.size + column] }
            set { self.modules[row * self.size + column] = newValue }
        }

        mutating func setFunction(_ row: Int, _ column: Int, _ dark: Bool) {
            self[row, column] = dark
            self.reserved[row * self.size + column] = true
        }

        static let alignmentCentres: [[Int]] = [
            [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50],
            [6, 30, 54], [6, 32, 58], [6, 34, 62], [6, 26, 46, 66], [6, 26, 48, 70], [6, 26, 50, 74], [6, 30, 54, 78],
            [6, 30, 56, 82], [6, 30, 58, 86], [6, 34, 62, 90],
        ]

        mutating func placeFunctionPatterns() {
            // Timing patterns, then the finders with their separators over them.
            for index in 0..<self.size {
                self.setFunction(6, index, index % 2 == 0)
                self.setFunction(index, 6, index % 2 == 0)
            }
            for (row, column) in [(3, 3), (3, self.size - 4), (self.size - 4, 3)] {
                for dy in -4...4 {
                    for dx in -4...4 {
                        let r = row + dy, c = column + dx
                        guard (0..<self.size).contains(r), (0..<self.size).contains(c) else { continue }
                        let distance = max(abs(dx), abs(dy))
                        self.setFunction(r, c, distance != 2 && distance != 4)
                    }
                }
            }
            // Alignment patterns, except where they would overlap a finder.
            let centres = Self.alignmentCentres[self.version - 1]
            for row in centres {
                for column in centres {
                    let nearFinder = (row == 6 && column == 6) || (row == 6 && column == centres.last) || (row == centres.last && column == 6)
                    guard !nearFinder else { continue }
                    for dy in -2...2 {
                        for dx in -2...2 { self.setFunction(row + dy, column + dx, max(abs(dx), abs(dy)) != 1) }
                    }
                }
            }
            // The format areas are reserved now and written once the mask is chosen; the dark module is always dark.
            self.writeFormat(mask: 0)
            self.writeVersion()
        }

        /// Writes the 15 format bits (level M, `mask`) in both copies, and the dark module.
        mutating func writeFormat(mask: Int) {
            let data = (0b00 << 3) | mask  // level M is 00
            var remainder = data
            for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
            let bits = ((data << 10) | remainder) ^ 0x5412
            func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
            // Around the top-left finder.
            for index in 0...5 { self.setFunction(index, 8, bit(index)) }
            self.setFunction(7, 8, bit(6))
            self.setFunction(8, 8, bit(7))
            self.setFunction(8, 7, bit(8))
            for index in 9..<15 { self.setFunction(8, 14 - index, bit(index)) }
            // Beside the other two finders.
            for index in 0..<8 { self.setFunction(8, self.size - 1 - index, bit(index)) }
            for index in 8..<15 { self.setFunction(self.size - 15 + index, 8, bit(index)) }
            self.setFunction(self.size - 8, 8, true)
        }

        /// The 18 version bits (versions 7 and up), in the two 6 × 3 blocks.
        mutating func writeVersion() {
            guard self.version >= 7 else { return }
            var remainder = self.version
            for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
            let bits = (self.version << 12) | remainder
            for index in 0..<18 {
                let dark = (bits >> index) & 1 == 1
                let a = self.size - 11 + index % 3, b = index / 3
                self.setFunction(b, a, dark)
                self.setFunction(a, b, dark)
            }
        }

        /// Places the codewords' bits in the zigzag order: two-column strips from the right, alternately upwards and
        /// downwards, skipping the vertical timing pattern and the function modules.
        mutating func placeData(_ codewords: [UInt8]) {
            var bitIndex = 0
            let total = codewords.count * 8
            var right = self.size - 1
            while right >= 1 {
                if right == 6 { right = 5 }
                let upwards = ((right + 1) & 2) == 0
                for step in 0..<self.size {
                    let row = upwards ? self.size - 1 - step : step
                    for column in [right, right - 1] where !self.reserved[row * self.size + column] {
                        // Remainder bits (after the last codeword) stay light.
                        if bitIndex < total {
                            self[row, column] = (codewords[bitIndex / 8] >> (7 - bitIndex % 8)) & 1 == 1
                            bitIndex += 1
                        }
                    }
                }
                right -= 2
            }
        }

        static func maskBit(_ mask: Int, _ row: Int, _ column: Int) -> Bool {
            switch mask {
            case 0: (row + column) % 2 == 0
            case 1: row % 2 == 0
            case 2: column % 3 == 0
            case 3: (row + column) % 3 == 0
            case 4: (row / 2 + column / 3) % 2 == 0
            case 5: (row * column) % 2 + (row * column) % 3 == 0
            case 6: ((row * column) % 2 + (row * column) % 3) % 2 == 0
            default: ((row + column) % 2 + (row * column) % 3) % 2 == 0
            }
        }

        /// The grid with `mask` applied to the data modules and its format bits written.
        func masked(_ mask: Int) -> Grid {
            var copy = self
            for row in 0..<self.size {
                for column in 0..<self.size where !self.reserved[row * self.size + column] && Self.maskBit(mask, row, column) {
                    copy[row, column].toggle()
                }
            }
            copy.writeFormat(mask: mask)
            return copy
        }

        /// §7.8.3: runs of five or more, 2 × 2 blocks, finder-like patterns, and the balance of dark and light.
        func penalty() -> Int {
            var score = 0
            let n = self.size
            func line(_ at: (Int) -> Bool) -> Int {
                var points = 0
                var run = 1
                for index in 1..<n {
                    if at(index) == at(index - 1) {
                        run += 1
                    } else {
                        if run >= 5 { points += run - 2 }
                        run = 1
                    }
                }
                if run >= 5 { points += run - 2 }
                // Finder-like 1:1:3:1:1 with four light modules on either side.
                let pattern: [Bool] = [true, false, true, true, true, false, true]
                for start in 0...(n - 7) where (0..<7).allSatisfy({ at(start + $0) == pattern[$0] }) {
                    let before = (max(0, start - 4)..<start).allSatisfy { !at($0) } && start >= 4
                    let after = (start + 7..<min(n, start + 11)).allSatisfy { !at($0) } && start + 11 <= n
                    if before || after { points += 40 }
                }
                return points
            }
            for index in 0..<n {
                score += line { self[index, $0] }
                score += line { self[$0, index] }
            }
            for row in 0..<(n - 1) {
                for column in 0..<(n - 1) {
                    let value = self[row, column]
                    if self[row, column + 1] == value && self[row + 1, column] == value && self[row + 1, column + 1] == value { score += 3 }
                }
            }
            let dark = self.modules.filter { $0 }.count
            let total = n * n
            score += max(0, (abs(dark * 20 - total * 10) + total - 1) / total - 1) * 10
            return score
        }
    }
}
