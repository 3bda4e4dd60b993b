import HummingbirdBcrypt
import NIOPosix

/// bcrypt hashing off the event loops: a hash takes tens to hundreds of milliseconds by design.
struct PasswordHasher: Sendable {
    let cost: UInt8

    /// A hash of a fixed password, verified against when the account does not exist so that both paths cost the same.
    private static let decoy = Bcrypt.hash("touchstone-decoy-password", cost: 4)

    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    func verify(_ password: String, hash: String?) async throws -> Bool {
        let target = hash ?? Self.decoy
        let matches = try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: target) }
        return matches && hash != nil
    }
}
