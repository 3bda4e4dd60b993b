/// A minimal, strict reader for the DER (X.690) structures that carry keys and ECDSA signatures.
///
/// Only definite, minimally encoded lengths are accepted, every length is checked against the bytes that remain, and
/// nothing is read past the end: hostile input throws, it never traps.
struct DERReader {
    enum Tag: UInt8 {
        case integer = 0x02
        case bitString = 0x03
        case null = 0x05
        case objectIdentifier = 0x06
        case sequence = 0x30
    }

    struct Error: Swift.Error, Hashable {
        var reason: String
    }

    private(set) var remaining: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        self.remaining = bytes
    }

    var isAtEnd: Bool { self.remaining.isEmpty }

    /// The tag of the next element, if any.
    var peekTag: UInt8? { self.remaining.first }

    /// Reads one element with the given tag and returns its content bytes.
    mutating func read(_ tag: Tag) throws(Error) -> ArraySlice<UInt8> {
        guard let first = self.remaining.first else { throw Error(reason: "unexpected end of DER data") }
        guard first == tag.rawValue else { throw Error(reason: "unexpected DER tag \(first), expected \(tag.rawValue)") }
        var index = self.remaining.index(after: self.remaining.startIndex)
        guard index < self.remaining.endIndex else { throw Error(reason: "DER length missing") }
        let lengthByte = self.remaining[index]
        index += 1
        var length = 0
        if lengthByte < 0x80 {
            length = Int(lengthByte)
        } else {
            let count = Int(lengthByte & 0x7F)
            // 0x80 is the indefinite form, which DER forbids; more than 3 length bytes is never a key.
            guard count >= 1, count <= 3 else { throw Error(reason: "unsupported DER length form") }
            guard self.remaining.endIndex - index >= count else { throw Error(reason: "DER length truncated") }
            for offset in 0..<count {
                length = (length << 8) | Int(self.remaining[index + offset])
            }
            index += count
            // Minimal encoding: long form only for lengths of 128 or more, without leading zero bytes.
            guard length >= 0x80, self.remaining[index - count] != 0 else {
                throw Error(reason: "DER length is not minimally encoded")
            }
        }
        guard self.remaining.endIndex - index >= length else { throw Error(reason: "DER length past the end") }
        let content = self.remaining[index..<(index + length)]
        self.remaining = self.remaining[(index + length)...]
        return content
    }

    /// Reads a non-negative INTEGER and returns its magnitude without leading zero bytes.
    mutating func readUnsignedInteger() throws(Error) -> ArraySlice<UInt8> {
        let content = try self.read(.integer)
        guard let first = content.first else { throw Error(reason: "empty DER integer") }
        guard first & 0x80 == 0 else { throw Error(reason: "negative DER integer") }
        if first == 0, content.count > 1 {
            guard content[content.startIndex + 1] & 0x80 != 0 else {
                throw Error(reason: "DER integer is not minimally encoded")
            }
            return content.dropFirst()
        }
        return content
    }

    /// Reads a BIT STRING with no unused bits and returns its bytes.
    mutating func readOctetAlignedBitString() throws(Error) -> ArraySlice<UInt8> {
        let content = try self.read(.bitString)
        guard content.first == 0 else { throw Error(reason: "BIT STRING with unused bits") }
        return content.dropFirst()
    }

    /// Fails unless every byte has been read.
    func expectEnd() throws(Error) {
        guard self.remaining.isEmpty else { throw Error(reason: "trailing bytes after DER structure") }
    }
}

/// Writes the few DER structures Touchstone emits (SPKI wrappers).
enum DERWriter {
    static func element(_ tag: DERReader.Tag, _ content: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [tag.rawValue]
        let length = content.count
        if length < 0x80 {
            out.append(UInt8(length))
        } else if length <= 0xFF {
            out += [0x81, UInt8(length)]
        } else if length <= 0xFFFF {
            out += [0x82, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            out += [0x83, UInt8(length >> 16), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
        }
        return out + content
    }
}
