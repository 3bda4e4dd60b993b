/// Ed25519 public keys that are not valid full-order keys, as 32-byte encodings.
///
/// The eight small-order points are the list of "Taming the many EdDSAs" (Brendel, Cremers, Jackson, Zhao, 2020,
/// Table 6) and libsodium's blocklist; the non-canonical encodings reduce y modulo p or set the sign bit of x = 0.
/// The mixed-order key is RFC 8032's test vector 1 public key plus a point of order 8 (computed with Python's integers).
public enum Ed25519Vectors {
    public struct Case: Sendable, CustomStringConvertible {
        public var name: String
        public var hex: String
        public var description: String { self.name }
        /// The 32 bytes.
        public var bytes: [UInt8] {
            let digits = Array(self.hex.utf8)
            return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
        }
        /// RFC 8410 SubjectPublicKeyInfo DER of the key.
        public var spkiDER: [UInt8] { [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00] + self.bytes }
    }

    /// The eight points of order 1, 2, 4 and 8, canonically encoded.
    public static let smallOrder: [Case] = [
        .init(name: "identity (order 1)", hex: "0100000000000000000000000000000000000000000000000000000000000000"),
        .init(name: "order 2 (y = -1)", hex: "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
        .init(name: "order 4 (all zero)", hex: "0000000000000000000000000000000000000000000000000000000000000000"),
        .init(name: "order 4 (negative x)", hex: "0000000000000000000000000000000000000000000000000000000000000080"),
        .init(name: "order 8 (a)", hex: "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
        .init(name: "order 8 (a, negative x)", hex: "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85"),
        .init(name: "order 8 (b)", hex: "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
        .init(name: "order 8 (b, negative x)", hex: "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa"),
    ]

    /// Non-canonical encodings of small-order points: y ≥ p, or x = 0 with the sign bit set.
    public static let nonCanonical: [Case] = [
        .init(name: "identity with the sign bit", hex: "0100000000000000000000000000000000000000000000000000000000000080"),
        .init(name: "order 2 with the sign bit", hex: "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
        .init(name: "y = p (order 4)", hex: "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
        .init(name: "y = p, sign bit", hex: "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
        .init(name: "y = p + 1 (identity)", hex: "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),
        .init(name: "y = p + 1, sign bit", hex: "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"),
    ]

    /// A point with a torsion component: on the curve, not of small order, not in the prime-order subgroup.
    public static let mixedOrder = Case(name: "mixed order", hex: "9158312a9a8d6e3b34c891d6d61444f8b8211c5117ebad15bdb0bd68b07e0245")
    /// No point has y = 2.
    public static let notOnCurve = Case(name: "not on the curve", hex: "0200000000000000000000000000000000000000000000000000000000000000")
    /// RFC 8032 §7.1 test 1's public key: valid.
    public static let valid = Case(name: "RFC 8032 test 1", hex: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")

    /// Every invalid key above.
    public static var allInvalid: [Case] { smallOrder + nonCanonical + [mixedOrder, notOnCurve] }
}
