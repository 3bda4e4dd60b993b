public import Crypto
public import Foundation
import TouchstoneCrypto

/// Server-provided DPoP nonces (RFC 9449 §8) that need no storage: a nonce is the number of the current period (a
/// minute by default) and a MAC of it under a key every instance derives from the same secret, so every instance
/// accepts every instance's nonces. The current period's nonce and the previous one are accepted, and the next one in
/// the last ``allowedSkew`` seconds before it begins: an instance whose clock is a little ahead has already moved on,
/// and its nonce is not refused by the others until their clocks catch up.
public struct DPoPNonces: Sendable {
    private let key: SymmetricKey
    public let period: TimeInterval
    /// How far ahead of this clock another instance's may be (the proofs' `iat` allowance).
    public let allowedSkew: TimeInterval

    public init(key: SymmetricKey, period: TimeInterval = 60, allowedSkew: TimeInterval = 5) {
        self.key = key
        self.period = period
        self.allowedSkew = min(max(0, allowedSkew), period)
    }

    private func number(at now: Date) -> UInt64 { UInt64(max(0, now.timeIntervalSince1970 / self.period)) }

    private func nonce(for number: UInt64) -> String {
        let counter = withUnsafeBytes(of: number.bigEndian) { Array($0) }
        let mac = HMAC<SHA256>.authenticationCode(for: counter, using: self.key)
        return Base64.urlEncode(counter + Array(mac.prefix(16)))
    }

    /// The nonce to send now (`DPoP-Nonce`).
    public func current(at now: Date) -> String { self.nonce(for: self.number(at: now)) }

    /// Whether `nonce` is this period's or the previous one's, or the next one's within ``allowedSkew`` of its start.
    public func isAcceptable(_ nonce: String, at now: Date) -> Bool {
        guard nonce.utf8.count == 32, let bytes = Base64.urlDecodeCanonical(nonce), bytes.count == 24 else { return false }
        let number = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let current = self.number(at: now)
        let next = self.number(at: now.addingTimeInterval(self.allowedSkew))
        guard number == current || number &+ 1 == current || (number == next && next == current &+ 1) else { return false }
        return ConstantTime.equal(Array(nonce.utf8), Array(self.nonce(for: number).utf8))
    }
}
