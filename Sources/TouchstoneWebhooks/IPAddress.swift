import Foundation

/// An IPv4 or IPv6 address as its bytes (4 or 16), parsed from its textual form, and the ranges a webhook must not
/// reach without the operator's leave (server-side request forgery).
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), in network order.
    public let bytes: [UInt8]

    /// Parses dotted-quad IPv4 (`192.0.2.1`, four decimal parts without leading zeros) or IPv6 (RFC 4291 §2.2: `::`
    /// compression, an embedded IPv4 tail). Brackets, zone identifiers (`%eth0`) and anything else: nil.
    public init?(_ text: some StringProtocol) {
        if let v4 = Self.parseIPv4(Substring(text)) {
            self.bytes = v4
        } else if let v6 = Self.parseIPv6(Substring(text)) {
            self.bytes = v6
        } else {
            return nil
        }
    }

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    public var isIPv4: Bool { self.bytes.count == 4 }

    /// Where an address lies, for the destination policy.
    public enum Range: String, Sendable {
        case loopback
        /// RFC 1918, shared address space (RFC 6598), and the other ranges that are not on the public Internet:
        /// unspecified, "this network", benchmarking, documentation, multicast, reserved, broadcast.
        case `private`
        case linkLocal = "link-local"
        case uniqueLocal = "unique-local"
        case `public`
    }

    /// The range this address lies in. An IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64
    /// (`64:ff9b::/96`) or 6to4 (`2002::/16`) IPv6 address is judged by the IPv4 address it carries.
    public var range: Range {
        if self.isIPv4 { return Self.range(ipv4: self.bytes) }
        let b = self.bytes
        let zeros10 = b[0..<10].allSatisfy { $0 == 0 }
        if zeros10 && b[10] == 0xff && b[11] == 0xff { return Self.range(ipv4: Array(b[12..<16])) }
        if b[0..<15].allSatisfy({ $0 == 0 }) {
            return b[15] == 1 ? .loopback : .private  // ::1, and :: (unspecified)
        }
        if b[0..<12].allSatisfy({ $0 == 0 }) { return Self.range(ipv4: Array(b[12..<16])) }
        if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4..<12].allSatisfy({ $0 == 0 }) {
            return Self.range(ipv4: Array(b[12..<16]))
        }
        if b[0] == 0x20 && b[1] == 0x02 { return Self.range(ipv4: Array(b[2..<6])) }
        if b[0] == 0xfe && (b[1] & 0xc0) == 0x80 { return .linkLocal }  // fe80::/10
        if (b[0] & 0xfe) == 0xfc { return .uniqueLocal }  // fc00::/7
        if b[0] == 0xfe && (b[1] & 0xc0) == 0xc0 { return .uniqueLocal }  // fec0::/10, deprecated site-local
        if b[0] == 0xff { return .private }  // multicast
        if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8 { return .private }  // 2001:db8::/32, documentation
        if b[0] == 0x01 && b[1..<8].allSatisfy({ $0 == 0 }) { return .private }  // 100::/64, discard
        return .public
    }

    /// IPv4 ranges of RFC 6890's special-purpose registry that matter here.
    static func range(ipv4 b: [UInt8]) -> Range {
        switch (b[0], b[1]) {
        case (127, _): return .loopback
        case (10, _), (0, _): return .private
        case (172, 16...31), (192, 168): return .private
        case (100, 64...127): return .private  // RFC 6598 shared address space (carrier-grade NAT)
        case (169, 254): return .linkLocal
        case (192, 0) where b[2] == 0 || b[2] == 2: return .private  // IETF protocol assignments, TEST-NET-1
        case (198, 18...19): return .private  // benchmarking
        case (198, 51) where b[2] == 100, (203, 0) where b[2] == 113: return .private  // TEST-NET-2, -3
        case (224...255, _): return .private  // multicast, reserved, broadcast
        default: return .public
        }
    }

    public var description: String {
        if self.isIPv4 { return self.bytes.map(String.init).joined(separator: ".") }
        var groups: [UInt16] = []
        for index in stride(from: 0, to: 16, by: 2) { groups.append(UInt16(self.bytes[index]) << 8 | UInt16(self.bytes[index + 1])) }
        // RFC 5952: the longest run (of two or more) of zero groups becomes "::".
        var bestStart = -1, bestLength = 1, start = -1
        for (index, group) in Array(groups.enumerated().map { ($0.offset, $0.element) }) + [(8, 1)] {
            if group == 0 {
                if start < 0 { start = index }
            } else if start >= 0 {
                if index - start > bestLength { bestStart = start; bestLength = index - start }
                start = -1
            }
        }
        let hex = groups.map { String($0, radix: 16) }
        guard bestStart >= 0 else { return hex.joined(separator: ":") }
        return hex[..<bestStart].joined(separator: ":") + "::" + hex[(bestStart + bestLength)...].joined(separator: ":")
    }

    static func parseIPv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }),
                part == "0" || part.first != "0", let value = UInt8(part)
            else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    static func parseIPv6(_ text: Substring) -> [UInt8]? {
        guard text.count >= 2, text.count <= 45, text.contains(":") else { return nil }
        var head: [UInt8] = []
        var tail: [UInt8] = []
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String, allowIPv4: Bool) -> [UInt8]? {
            if part.isEmpty { return [] }
            var out: [UInt8] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if allowIPv4 && index == pieces.count - 1 && piece.contains(".") {
                    guard let v4 = parseIPv4(piece) else { return nil }
                    out += v4
                    continue
                }
                guard (1...4).contains(piece.count), piece.allSatisfy(\.isHexDigit), let value = UInt16(piece, radix: 16) else { return nil }
                out += [UInt8(value >> 8), UInt8(value & 0xff)]
            }
            return out
        }
        if halves.count == 2 {
            guard let h = groups(halves[0], allowIPv4: false), let t = groups(halves[1], allowIPv4: true), h.count + t.count <= 14 else { return nil }
            head = h
            tail = t
            return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
        }
        guard let all = groups(halves[0], allowIPv4: true), all.count == 16 else { return nil }
        return all
    }
}
