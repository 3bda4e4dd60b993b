/// Validation of Ed25519 public keys beyond their length: the encoding must be canonical and decode to a point of
/// the prime-order subgroup (RFC 8032 §5.1.3, with the checks of "Taming the many EdDSAs", Brendel et al. 2020).
///
/// swift-crypto (like most Ed25519 libraries) accepts any 32 bytes as a public key. Keys of small order (the identity,
/// the points of order 2, 4 and 8, and any point with a torsion component) let one signature verify for many messages
/// under lax verifiers, and no honest device ever makes one, so Touchstone refuses them before they are stored.
public enum Ed25519KeyValidation {
    /// Why a 32-byte string is not a usable Ed25519 public key.
    public enum Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// Not 32 bytes.
        case wrongLength
        /// The y coordinate is not reduced modulo p, or x is zero with the sign bit set.
        case nonCanonicalEncoding
        /// No point of the curve has this encoding.
        case notOnCurve
        /// The identity or another point of order dividing 8.
        case smallOrder
        /// A point outside the prime-order subgroup (it has a torsion component).
        case notInPrimeOrderSubgroup

        public var description: String {
            switch self {
            case .wrongLength: "an Ed25519 key is 32 bytes"
            case .nonCanonicalEncoding: "the Ed25519 key is not canonically encoded"
            case .notOnCurve: "the Ed25519 key is not a point on the curve"
            case .smallOrder: "the Ed25519 key is a point of small order"
            case .notInPrimeOrderSubgroup: "the Ed25519 key is not in the prime-order subgroup"
            }
        }
    }

    /// Checks that `raw` is a canonical encoding of a point of order ℓ (the large prime), throwing why not.
    public static func validate(_ raw: some Collection<UInt8>) throws(Failure) {
        let bytes = Array(raw)
        guard bytes.count == 32 else { throw .wrongLength }
        let point = try EdwardsPoint(decoding: bytes)
        // [8]P = O exactly for the small-order points (the identity among them); [ℓ]P = O exactly for the prime-order
        // subgroup.
        if point.multiplied(byScalar: [8]).isIdentity { throw .smallOrder }
        guard point.multiplied(byScalar: EdwardsPoint.groupOrder).isIdentity else { throw .notInPrimeOrderSubgroup }
    }

    /// Whether `raw` is a valid, full-order Ed25519 public key.
    public static func isValid(_ raw: some Collection<UInt8>) -> Bool {
        (try? self.validate(raw)) != nil
    }
}

// MARK: - Field arithmetic modulo p = 2^255 - 19

/// An element of GF(2^255 - 19) as four little-endian 64-bit limbs, kept below 2^256 (reduced fully only when compared
/// or encoded). Only used to validate keys: clarity over speed, and no secrets pass through it.
struct FieldElement: Sendable {
    var limbs: (UInt64, UInt64, UInt64, UInt64)

    static let zero = FieldElement(limbs: (0, 0, 0, 0))
    static let one = FieldElement(limbs: (1, 0, 0, 0))
    /// p = 2^255 - 19.
    static let p = FieldElement(limbs: (0xFFFF_FFFF_FFFF_FFED, 0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF, 0x7FFF_FFFF_FFFF_FFFF))
    /// d = -121665/121666 (RFC 8032 §5.1).
    static let d = FieldElement(hex: "52036cee2b6ffe738cc740797779e89800700a4d4141d8ab75eb4dca135978a3")
    /// sqrt(-1) = 2^((p-1)/4) (RFC 8032 §5.1.3).
    static let sqrtMinusOne = FieldElement(hex: "2b8324804fc1df0b2b4d00993dfbd7a72f431806ad2fe478c4ee1b274a0ea0b0")

    init(limbs: (UInt64, UInt64, UInt64, UInt64)) {
        self.limbs = limbs
    }

    /// From big-endian hex (constants only).
    init(hex: String) {
        var words: [UInt64] = []
        var text = Substring(hex)
        while !text.isEmpty {
            words.append(UInt64(text.suffix(16), radix: 16)!)
            text = text.dropLast(16)
        }
        self.limbs = (words[0], words[1], words[2], words[3])
    }

    /// From 32 little-endian bytes, as they are (not reduced).
    init(littleEndian bytes: [UInt8]) {
        func word(_ index: Int) -> UInt64 {
            (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[index * 8 + $1]) << (8 * UInt64($1)) }
        }
        self.limbs = (word(0), word(1), word(2), word(3))
    }

    var array: [UInt64] { [self.limbs.0, self.limbs.1, self.limbs.2, self.limbs.3] }

    init(_ array: [UInt64]) {
        self.limbs = (array[0], array[1], array[2], array[3])
    }

    /// Whether the stored value (not reduced) is less than `other`'s.
    func isLess(than other: FieldElement) -> Bool {
        let a = self.array
        let b = other.array
        for index in (0..<4).reversed() where a[index] != b[index] {
            return a[index] < b[index]
        }
        return false
    }

    /// The value reduced into [0, p).
    var reduced: FieldElement {
        var value = self
        while !value.isLess(than: .p) {
            value = value.subtractingWithoutReduction(.p).0
        }
        return value
    }

    var isZero: Bool { self.reduced.array == [0, 0, 0, 0] }
    /// The low bit of the reduced value (the "sign" of x in the encoding).
    var isNegative: Bool { self.reduced.limbs.0 & 1 == 1 }

    static func == (lhs: FieldElement, rhs: FieldElement) -> Bool { lhs.reduced.array == rhs.reduced.array }

    private func subtractingWithoutReduction(_ other: FieldElement) -> (FieldElement, borrow: Bool) {
        let a = self.array
        let b = other.array
        var result = [UInt64](repeating: 0, count: 4)
        var borrow = false
        for index in 0..<4 {
            let (d1, o1) = a[index].subtractingReportingOverflow(b[index])
            let (d2, o2) = d1.subtractingReportingOverflow(borrow ? 1 : 0)
            result[index] = d2
            borrow = o1 || o2
        }
        return (FieldElement(result), borrow)
    }

    /// Adds `small * 38` (2^256 ≡ 38 mod p) to four limbs, folding any carry out of the top limb again.
    private static func fold(_ limbs: inout [UInt64], carry: UInt64) {
        var extra = carry
        while extra != 0 {
            let (hi, lo) = extra.multipliedFullWidth(by: 38)
            var add = lo
            var carryOut = hi
            for index in 0..<4 {
                let (s, o) = limbs[index].addingReportingOverflow(add)
                limbs[index] = s
                add = o ? 1 : 0
                if add == 0 { break }
            }
            carryOut &+= add
            extra = carryOut
        }
    }

    static func + (lhs: FieldElement, rhs: FieldElement) -> FieldElement {
        let a = lhs.array
        let b = rhs.array
        var result = [UInt64](repeating: 0, count: 4)
        var carry: UInt64 = 0
        for index in 0..<4 {
            let (s1, o1) = a[index].addingReportingOverflow(b[index])
            let (s2, o2) = s1.addingReportingOverflow(carry)
            result[index] = s2
            carry = (o1 ? 1 : 0) + (o2 ? 1 : 0)
        }
        Self.fold(&result, carry: carry)
        return FieldElement(result)
    }

    static func - (lhs: FieldElement, rhs: FieldElement) -> FieldElement {
        // a - b = a + (2p - b); 2p - b is non-negative because b < 2^256 = 2p + 38 once b is reduced.
        let twoP = FieldElement(limbs: (0xFFFF_FFFF_FFFF_FFDA, 0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_FFFF_FFFF))
        return lhs + twoP.subtractingWithoutReduction(rhs.reduced).0
    }

    static prefix func - (value: FieldElement) -> FieldElement { .zero - value }

    static func * (lhs: FieldElement, rhs: FieldElement) -> FieldElement {
        let a = lhs.array
        let b = rhs.array
        var wide = [UInt64](repeating: 0, count: 8)
        for i in 0..<4 {
            var carry: UInt64 = 0
            for j in 0..<4 {
                // wide[i+j] + a*b + carry < 2^128: the high word never overflows.
                let (hi, lo) = a[i].multipliedFullWidth(by: b[j])
                let (s1, o1) = wide[i + j].addingReportingOverflow(lo)
                let (s2, o2) = s1.addingReportingOverflow(carry)
                wide[i + j] = s2
                carry = hi &+ (o1 ? 1 : 0) &+ (o2 ? 1 : 0)
            }
            wide[i + 4] = carry
        }
        // wide = lo + 2^256 hi ≡ lo + 38 hi.
        var result = Array(wide[0..<4])
        var carry: UInt64 = 0
        for index in 0..<4 {
            let (hi, lo) = wide[index + 4].multipliedFullWidth(by: 38)
            let (s1, o1) = result[index].addingReportingOverflow(lo)
            let (s2, o2) = s1.addingReportingOverflow(carry)
            result[index] = s2
            carry = hi &+ (o1 ? 1 : 0) &+ (o2 ? 1 : 0)
        }
        Self.fold(&result, carry: carry)
        return FieldElement(result)
    }

    /// self^exponent, the exponent as little-endian bytes.
    func power(_ exponent: [UInt8]) -> FieldElement {
        var result = FieldElement.one
        for byte in exponent.reversed() {
            for bit in (0..<8).reversed() {
                result = result * result
                if (byte >> UInt8(bit)) & 1 == 1 { result = result * self }
            }
        }
        return result
    }

    /// (p - 5) / 8 = 2^252 - 3, little-endian.
    static let exponentPMinus5Over8: [UInt8] = [0xFD] + [UInt8](repeating: 0xFF, count: 30) + [0x0F]
}

// MARK: - Points of edwards25519

/// A point of -x^2 + y^2 = 1 + d x^2 y^2 in extended coordinates (X:Y:Z:T), x = X/Z, y = Y/Z, xy = T/Z.
struct EdwardsPoint: Sendable {
    var x: FieldElement
    var y: FieldElement
    var z: FieldElement
    var t: FieldElement

    static let identity = EdwardsPoint(x: .zero, y: .one, z: .one, t: .zero)

    /// ℓ = 2^252 + 27742317777372353535851937790883648493, little-endian.
    static let groupOrder: [UInt8] = [
        0xED, 0xD3, 0xF5, 0x5C, 0x1A, 0x63, 0x12, 0x58, 0xD6, 0x9C, 0xF7, 0xA2, 0xDE, 0xF9, 0xDE, 0x14,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
    ]

    init(x: FieldElement, y: FieldElement, z: FieldElement, t: FieldElement) {
        self.x = x
        self.y = y
        self.z = z
        self.t = t
    }

    /// Decodes a point (RFC 8032 §5.1.3), refusing non-canonical encodings.
    init(decoding bytes: [UInt8]) throws(Ed25519KeyValidation.Failure) {
        let sign = bytes[31] >> 7 == 1
        var yBytes = bytes
        yBytes[31] &= 0x7F
        let y = FieldElement(littleEndian: yBytes)
        // Step 1: y must be less than p.
        guard y.isLess(than: .p) else { throw .nonCanonicalEncoding }
        // Step 2: x^2 = (y^2 - 1) / (d y^2 + 1); candidate x = u v^3 (u v^7)^((p-5)/8).
        let y2 = y * y
        let u = y2 - .one
        let v = FieldElement.d * y2 + .one
        let v3 = v * v * v
        let v7 = v3 * v3 * v
        var x = u * v3 * (u * v7).power(FieldElement.exponentPMinus5Over8)
        // Step 3: check the candidate, or multiply it by sqrt(-1).
        let vx2 = v * x * x
        if vx2 == u {
            // x is a square root
        } else if vx2 == -u {
            x = x * .sqrtMinusOne
        } else {
            throw .notOnCurve
        }
        // Step 4: x = 0 with the sign bit set is not canonical; otherwise pick the root with the right sign.
        if x.isZero && sign { throw .nonCanonicalEncoding }
        if x.isNegative != sign { x = -x }
        self.init(x: x, y: y, z: .one, t: x * y)
    }

    var isIdentity: Bool { self.x.isZero && self.y == self.z }

    /// The unified addition of Hisil–Wong–Carter–Dawson (2008) for a = -1, complete on this curve (doubling included).
    static func + (p: EdwardsPoint, q: EdwardsPoint) -> EdwardsPoint {
        let twoD = FieldElement.d + .d
        let a = (p.y - p.x) * (q.y - q.x)
        let b = (p.y + p.x) * (q.y + q.x)
        let c = p.t * twoD * q.t
        let d = (p.z + p.z) * q.z
        let e = b - a
        let f = d - c
        let g = d + c
        let h = b + a
        return EdwardsPoint(x: e * f, y: g * h, z: f * g, t: e * h)
    }

    /// [k]P, the scalar as little-endian bytes (double and add; fine for public values).
    func multiplied(byScalar scalar: [UInt8]) -> EdwardsPoint {
        var result = EdwardsPoint.identity
        for byte in scalar.reversed() {
            for bit in (0..<8).reversed() {
                result = result + result
                if (byte >> UInt8(bit)) & 1 == 1 { result = result + self }
            }
        }
        return result
    }
}
