import HummingbirdBcrypt
import NIOPosix

/// bcrypt hashing off the event loops: a hash takes tens to hundreds of milliseconds by design.
struct PasswordHasher: Sendable {
    let cost: UInt8
    /// A hash at the configured cost, verified against when the account does not exist, so that an unknown email
    /// costs the same time as a wrong password and does not reveal which accounts exist.
    private let decoy: String

    init(cost: UInt8) {
        self.cost = cost
        self.decoy = Bcrypt.hash("touchstone-decoy-password", cost: cost)
    }

    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Whether `password` matches `hash`; with no hash (unknown account) it does the same work and answers `false`.
    func verify(_ password: String, hash: String?) async throws -> Bool {
        let target = hash ?? self.decoy
        let matches = try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: target) }
        return matches && hash != nil
    }
}
