/// Encodes CBOR in the CTAP2 canonical form: shortest lengths, definite lengths, map keys sorted by their encoding
/// (shorter first, then bytewise).
public enum CBOREncoder {
    public static func encode(_ item: CBOR) -> [UInt8] {
        var out: [UInt8] = []
        self.append(item, to: &out)
        return out
    }

    private static func head(_ major: UInt8, _ value: UInt64, to out: inout [UInt8]) {
        let type = major << 5
        switch value {
        case 0..<24: out.append(type | UInt8(value))
        case 24...0xFF: out += [type | 24, UInt8(value)]
        case 0x100...0xFFFF: out += [type | 25, UInt8(value >> 8), UInt8(value & 0xFF)]
        case 0x10000...0xFFFF_FFFF:
            out.append(type | 26)
            for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8((value >> UInt64(shift)) & 0xFF)) }
        default:
            out.append(type | 27)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((value >> UInt64(shift)) & 0xFF)) }
        }
    }

    private static func append(_ item: CBOR, to out: inout [UInt8]) {
        switch item {
        case .unsigned(let value): self.head(0, value, to: &out)
        case .negative(let value): self.head(1, value, to: &out)
        case .bytes(let bytes):
            self.head(2, UInt64(bytes.count), to: &out)
            out += bytes
        case .text(let text):
            self.head(3, UInt64(text.utf8.count), to: &out)
            out += Array(text.utf8)
        case .array(let elements):
            self.head(4, UInt64(elements.count), to: &out)
            for element in elements { self.append(element, to: &out) }
        case .map(let map):
            self.head(5, UInt64(map.count), to: &out)
            let encoded = map.entries.map { (self.encode($0.key), self.encode($0.value)) }
            for (key, value) in encoded.sorted(by: { Self.canonicalOrder($0.0, $1.0) }) {
                out += key
                out += value
            }
        case .tagged(let tag, let inner):
            self.head(6, tag, to: &out)
            self.append(inner, to: &out)
        case .bool(let value): out.append(value ? 0xF5 : 0xF4)
        case .null: out.append(0xF6)
        case .undefined: out.append(0xF7)
        case .simple(let value):
            if value < 24 { out.append(0xE0 | value) } else { out += [0xF8, value] }
        case .float(let value):
            out.append(0xFB)
            let bits = value.bitPattern
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((bits >> UInt64(shift)) & 0xFF)) }
        }
    }

    private static func canonicalOrder(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.count != rhs.count ? lhs.count < rhs.count : lhs.lexicographicallyPrecedes(rhs)
    }
}
