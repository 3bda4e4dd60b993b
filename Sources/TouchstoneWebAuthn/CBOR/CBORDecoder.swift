/// Decodes CBOR with hard limits, so hostile input throws a ``CBORError`` and never traps or allocates without bound.
///
/// Every length is checked against the bytes that remain before anything is allocated; nesting depth and the total
/// number of items are capped; indefinite lengths and duplicate map keys are rejected.
public struct CBORDecoder: Sendable {
    public struct Limits: Sendable {
        public var maxDepth: Int
        public var maxItems: Int
        public var maxInputLength: Int

        public init(maxDepth: Int = 16, maxItems: Int = 4096, maxInputLength: Int = 256 * 1024) {
            self.maxDepth = maxDepth
            self.maxItems = maxItems
            self.maxInputLength = maxInputLength
        }
    }

    public var limits: Limits

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Decodes exactly one item that spans all of `bytes`.
    public func decode(_ bytes: [UInt8]) throws(CBORError) -> CBOR {
        let (item, consumed) = try self.decodePrefix(bytes[...])
        guard consumed == bytes.count else { throw .trailingBytes }
        return item
    }

    /// Decodes one item at the start of `bytes` and says how many bytes it took (authenticator data carries a COSE key
    /// followed by more data).
    public func decodePrefix(_ bytes: ArraySlice<UInt8>) throws(CBORError) -> (CBOR, consumed: Int) {
        guard bytes.count <= self.limits.maxInputLength else { throw .tooLong }
        var reader = Reader(bytes: bytes, limits: self.limits)
        let item = try reader.readItem(depth: 0)
        return (item, reader.offset - bytes.startIndex)
    }

    private struct Reader {
        let bytes: ArraySlice<UInt8>
        let limits: Limits
        var offset: Int
        var items = 0

        init(bytes: ArraySlice<UInt8>, limits: Limits) {
            self.bytes = bytes
            self.limits = limits
            self.offset = bytes.startIndex
        }

        var remaining: Int { self.bytes.endIndex - self.offset }

        mutating func byte() throws(CBORError) -> UInt8 {
            guard self.offset < self.bytes.endIndex else { throw .truncated }
            defer { self.offset += 1 }
            return self.bytes[self.offset]
        }

        mutating func take(_ count: UInt64) throws(CBORError) -> ArraySlice<UInt8> {
            guard count <= UInt64(self.remaining) else { throw .truncated }
            let end = self.offset + Int(count)
            defer { self.offset = end }
            return self.bytes[self.offset..<end]
        }

        /// The argument of the initial byte (RFC 8949 §3).
        mutating func argument(_ info: UInt8) throws(CBORError) -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24: return UInt64(try self.byte())
            case 25, 26, 27:
                let width = 1 << (info - 24)
                var value: UInt64 = 0
                for byte in try self.take(UInt64(width)) { value = (value << 8) | UInt64(byte) }
                return value
            case 31: throw .indefiniteLength
            default: throw .reservedValue
            }
        }

        mutating func readItem(depth: Int) throws(CBORError) -> CBOR {
            guard depth <= self.limits.maxDepth else { throw .tooDeep }
            self.items += 1
            guard self.items <= self.limits.maxItems else { throw .tooManyItems }
            let initial = try self.byte()
            let major = initial >> 5
            let info = initial & 0x1F
            switch major {
            case 0:
                return .unsigned(try self.argument(info))
            case 1:
                return .negative(try self.argument(info))
            case 2:
                return .bytes(Array(try self.take(try self.argument(info))))
            case 3:
                guard let text = String(validating: try self.take(try self.argument(info)), as: UTF8.self) else {
                    throw .invalidUTF8
                }
                return .text(text)
            case 4:
                let count = try self.argument(info)
                // Each element takes at least one byte: a count beyond what remains is a lie.
                guard count <= UInt64(self.remaining) else { throw .truncated }
                var elements: [CBOR] = []
                elements.reserveCapacity(Int(count))
                for _ in 0..<count { elements.append(try self.readItem(depth: depth + 1)) }
                return .array(elements)
            case 5:
                let count = try self.argument(info)
                guard count <= UInt64(self.remaining / 2) else { throw .truncated }
                var map = CBORMap()
                var keys = Set<CBOR>()
                for _ in 0..<count {
                    let key = try self.readItem(depth: depth + 1)
                    guard keys.insert(key).inserted else { throw .duplicateMapKey }
                    map.set(key, try self.readItem(depth: depth + 1))
                }
                return .map(map)
            case 6:
                let tag = try self.argument(info)
                return .tagged(tag, try self.readItem(depth: depth + 1))
            default:
                return try self.simpleOrFloat(info)
            }
        }

        mutating func simpleOrFloat(_ info: UInt8) throws(CBORError) -> CBOR {
            switch info {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            case 23: return .undefined
            case 0..<20: return .simple(info)
            case 24:
                let value = try self.byte()
                guard value >= 32 else { throw .reservedValue }
                return .simple(value)
            case 25: return .float(Self.half(UInt16(try self.argument(25))))
            case 26: return .float(Double(Float(bitPattern: UInt32(try self.argument(26)))))
            case 27: return .float(Double(bitPattern: try self.argument(27)))
            case 31: throw .indefiniteLength
            default: throw .reservedValue
            }
        }

        /// IEEE 754 half precision (RFC 8949 Appendix D).
        static func half(_ bits: UInt16) -> Double {
            let exponent = Int((bits >> 10) & 0x1F)
            let mantissa = Double(bits & 0x3FF)
            let magnitude: Double
            switch exponent {
            case 0: magnitude = mantissa * 0x1p-24
            case 31: magnitude = mantissa == 0 ? .infinity : .nan
            default: magnitude = (mantissa + 1024) * Double(sign: .plus, exponent: exponent - 25, significand: 1)
            }
            return bits & 0x8000 != 0 ? -magnitude : magnitude
        }
    }
}
