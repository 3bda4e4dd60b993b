#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The lock that makes an SQLite file one server's: an exclusive `flock` on `<database>.lock`, beside it, held until the
/// store is closed (or the process ends; the system drops the lock of a process that dies). One SQLite file serves one
/// instance (docs/deploy.md), and the server keeps what every instance must see in its memory there (the DPoP replay
/// record), so a second server on the file is stopped at its start. The CLI's other commands (`admin`, `clients`,
/// `migrate`) take no lock and still run beside a server.
final class DatabaseFileLock: Sendable {
    private let descriptor: Mutex<Int32?>
    let path: String

    /// Takes the lock of the database at `database`.
    ///
    /// - Throws: ``DatabaseInUse`` when another server holds it, or the lock file cannot be opened.
    init(database: String) throws {
        self.path = database + ".lock"
        let fd = open(self.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DatabaseInUse(path: self.path, reason: "cannot open the lock file (errno \(errno))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            throw DatabaseInUse(
                path: self.path,
                reason: code == EWOULDBLOCK
                    ? "another Touchstone server uses this database (one SQLite file serves one instance; for more, use PostgreSQL)"
                    : "cannot lock it (errno \(code))"
            )
        }
        self.descriptor = Mutex(fd)
    }

    /// Releases the lock (once; later calls do nothing).
    func release() {
        self.descriptor.withLock { fd in
            if let open = fd { close(open) }
            fd = nil
        }
    }

    deinit { self.release() }
}

/// The SQLite file is another server's, or its lock could not be taken.
struct DatabaseInUse: Error, CustomStringConvertible {
    let path: String
    let reason: String
    var description: String { "\(self.path): \(self.reason)" }
}
