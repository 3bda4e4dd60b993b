public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Throwaway files for tests, in one directory per test process (`$TMPDIR/touchstone-tests-<pid>`), removed by the
/// helpers that create them (in `defer`, so also when a test fails). A directory whose process is gone (a run that
/// crashed or was killed) is removed when the next test process starts using this helper.
public enum TemporaryFiles {
    private static let prefix = "touchstone-tests-"

    /// This process's directory, created on first use.
    public static let directory: URL = {
        let fileManager = FileManager.default
        let base = fileManager.temporaryDirectory
        let pid = ProcessInfo.processInfo.processIdentifier
        for name in (try? fileManager.contentsOfDirectory(atPath: base.path)) ?? [] where name.hasPrefix(Self.prefix) {
            guard let other = Int32(name.dropFirst(Self.prefix.count)), other != pid else { continue }
            // kill(pid, 0) fails with ESRCH when no such process exists: its files are left over.
            if kill(other, 0) != 0 && errno == ESRCH {
                try? fileManager.removeItem(at: base.appendingPathComponent(name))
            }
        }
        let directory = base.appendingPathComponent("\(Self.prefix)\(pid)")
        try? fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        // When the test process ends normally, its directory goes with it (a crash leaves it to the next run, above).
        atexit { try? FileManager.default.removeItem(at: TemporaryFiles.directory) }
        return directory
    }()

    /// A unique path in ``directory`` ending in `suffix` (nothing is created).
    public static func path(_ name: String, suffix: String = "") -> String {
        self.directory.appendingPathComponent("\(name)-\(UUID().uuidString)\(suffix)").path
    }

    /// Removes a file or directory and, for an SQLite database, its journal, WAL and shared-memory files and the
    /// key-encryption key the server generates beside it.
    public static func remove(_ path: String) {
        for sidecar in ["", "-wal", "-shm", "-journal", ".kek", ".lock"] {
            try? FileManager.default.removeItem(atPath: path + sidecar)
        }
    }
}
