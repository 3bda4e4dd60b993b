import Tracing
import Crypto
import HummingbirdBcrypt
import NIOPosix
import TouchstoneCrypto

/// bcrypt hashing off the event loops: a hash takes tens to hundreds of milliseconds by design.
///
/// bcrypt reads its input as a C string of at most 72 bytes: a NUL ends it and the rest is ignored, so on its own it
/// would make `"secret"` and `"secret\0anything"` (or two long passwords with a common 72-byte prefix) one password.
/// Touchstone therefore never gives bcrypt the password itself but a fixed-length digest of every byte of it:
///
///     stored = "$tsh1$" + bcrypt(cost, base64url(HMAC-SHA256(key: "touchstone-password-v1", UTF-8(NFC(password)))))
///
/// The digest is 43 ASCII characters without NUL; the HMAC key is a public domain separator, not a secret (it keeps
/// the digest from being a plain SHA-256 that may exist elsewhere). PINs (4–8 digits) are hashed the same way.
/// Hashes made before this scheme (bcrypt of the text as sent, without the prefix) still verify for inputs bcrypt
/// reads whole (no NUL, at most 72 bytes) and are replaced with the new form at the next successful sign-in.
struct PasswordHasher: Sendable {
    let cost: UInt8
    /// A hash at the configured cost, verified against when the account does not exist, so that an unknown email
    /// costs the same time as a wrong password and does not reveal which accounts exist.
    private let decoy: String

    static let prefix = "$tsh1$"
    private static let domainKey = SymmetricKey(data: Array("touchstone-password-v1".utf8))

    init(cost: UInt8) {
        self.cost = cost
        self.decoy = Self.prefix + Bcrypt.hash(Self.digest("touchstone-decoy-password"), cost: cost)
    }

    /// The outcome of checking a secret against a stored hash.
    enum Verification: Equatable {
        case mismatch
        case match
        /// It matched a hash of the older scheme: store ``PasswordHasher/hash(_:)`` of the secret in its place.
        case matchNeedingRehash
    }

    /// What bcrypt is given: base64url of HMAC-SHA256 over every byte of the normalised secret.
    static func digest(_ normalized: String) -> String {
        Base64.urlEncode(Array(HMAC<SHA256>.authenticationCode(for: Array(normalized.utf8), using: Self.domainKey)))
    }

    func hash(_ password: InputRules.Password) async throws -> String {
        try await self.hash(normalized: password.normalized)
    }

    func hash(pin: String) async throws -> String {
        try await self.hash(normalized: pin)
    }

    private func hash(normalized: String) async throws -> String {
        let cost = self.cost
        let digest = Self.digest(normalized)
        return try await NIOThreadPool.singleton.runIfActive { Self.prefix + Bcrypt.hash(digest, cost: cost) }
    }

    /// Whether `password` matches `hash`; with no hash (unknown account) it does the same work and answers `.mismatch`.
    func verify(_ password: InputRules.Password, hash: String?) async throws -> Verification {
        try await self.verify(normalized: password.normalized, asSent: password.asSent, hash: hash)
    }

    func verify(pin: String, hash: String?) async throws -> Verification {
        try await self.verify(normalized: pin, asSent: pin, hash: hash)
    }

    private func verify(normalized: String, asSent: String, hash: String?) async throws -> Verification {
        let target = hash ?? self.decoy
        if target.hasPrefix(Self.prefix) {
            let digest = Self.digest(normalized)
            let stored = String(target.dropFirst(Self.prefix.count))
            let matches = try await withSpan("password.verify") { _ in
                try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(digest, hash: stored) }
            }
            return matches && hash != nil ? .match : .mismatch
        }
        // A hash of the older scheme: only an input bcrypt reads whole can match it, so no suffix after a NUL and no
        // byte past the 72nd is ever ignored. (The work is still done, so the answer takes the usual time.)
        let readWhole = !asSent.utf8.contains(0) && asSent.utf8.count <= 72
        let matches = try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(asSent, hash: target) }
        return matches && readWhole && hash != nil ? .matchNeedingRehash : .mismatch
    }
}
