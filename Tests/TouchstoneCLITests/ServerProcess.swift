import Foundation
import Testing
import TouchstoneTesting

/// A `touchstone serve` process started from the built binary, as an operator would run it.
final class ServerProcess: @unchecked Sendable {
    let process: ChildProcess
    let port: Int
    private let output: FileHandle
    private let logLock = NSLock()
    private var logText = ""

    var baseURL: URL { URL(string: "http://127.0.0.1:\(self.port)")! }

    /// The binary next to the test bundle's build products (`swift build` / `swift test` build it).
    static var binary: URL {
        get throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            let candidates = [
                ProcessInfo.processInfo.environment["TOUCHSTONE_BINARY"].map { URL(fileURLWithPath: $0) },
                root.appendingPathComponent(".build/debug/touchstone"),
                root.appendingPathComponent(".build/release/touchstone"),
            ].compactMap { $0 }
            guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
                throw ProcessError("the touchstone binary is not built (run `swift build`; tried \(candidates.map(\.path)))")
            }
            return found
        }
    }

    /// The key-encryption key of test servers on PostgreSQL (32 bytes in base64; a test value, never a real one).
    static let testKeyEncryptionKey = "dG91Y2hzdG9uZS10ZXN0LWtleS1lbmNyeXB0aW9uLTE="

    /// Two instances on one database, started at once (both migrate: the advisory lock makes that safe).
    static func pair(database: String, environment: [String: String] = [:]) async throws -> (ServerProcess, ServerProcess) {
        async let first = ServerProcess(database: database, environment: environment)
        async let second = ServerProcess(database: database, environment: environment)
        return try await (first, second)
    }

    /// Starts `touchstone serve --port 0 ...` and waits for its "listening on" line to learn the port.
    init(database: String, extraArguments: [String] = [], environment: [String: String] = [:]) async throws {
        var env = ProcessInfo.processInfo.environment
        env["TOUCHSTONE_BCRYPT_COST"] = "4"
        // Load tests hammer one address and a few accounts; tests that want the limits turn them on.
        env["TOUCHSTONE_RATE_LIMITS"] = "off"
        // Every instance on one PostgreSQL database seals and opens the signing keys with the same key (SQLite keeps
        // its generated key beside the database file).
        if database.hasPrefix("postgres") {
            env["TOUCHSTONE_KEY_ENCRYPTION_KEY"] = Self.testKeyEncryptionKey
            // PostgreSQL without SMTP needs a mail folder named (the instances of a test share it).
            env["TOUCHSTONE_MAIL_DIR"] = TemporaryFiles.directory.appendingPathComponent("touchstone-mail-postgres").path
        }
        env.merge(environment) { $1 }
        let process = try ChildProcess(
            executable: try Self.binary.path,
            arguments: ["serve", "--host", "127.0.0.1", "--port", "0", "--database", database] + extraArguments,
            environment: env,
            output: .pipe,
            error: .sameAsOutput
        )

        // Reading the pipe blocks: do it on a thread of its own, never on the cooperative pool (other tests' tasks,
        // which may hold database locks the server is waiting for, must keep running meanwhile). A server that says
        // nothing for a minute is terminated, which ends the read.
        guard let handle = process.standardOutput else { throw ProcessError("no output pipe") }
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        let (port, buffer): (Int?, String) = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var buffer = ""
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    buffer += String(decoding: data, as: UTF8.self)
                    if let range = buffer.range(of: "listening on 127.0.0.1:") {
                        let digits = buffer[range.upperBound...].prefix(while: \.isNumber)
                        // The port ends the line (text logs) or the message (JSON logs).
                        let next = buffer[range.upperBound...].dropFirst(digits.count).first
                        if !digits.isEmpty, next?.isNewline == true || next == "\"" {
                            continuation.resume(returning: (Int(digits), buffer))
                            return
                        }
                    }
                }
                continuation.resume(returning: (nil, buffer))
            }
        }
        watchdog.cancel()
        guard let port else {
            if process.isRunning { process.terminate() }
            throw ProcessError("touchstone serve did not start listening:\n\(buffer)")
        }
        self.process = process
        self.output = handle
        self.port = port
        self.logText = buffer
        // Keep draining the pipe so the server never blocks on a full pipe.
        handle.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.logLock.lock()
            self.logText += String(decoding: data, as: UTF8.self)
            self.logLock.unlock()
        }
    }

    var log: String {
        self.logLock.lock()
        defer { self.logLock.unlock() }
        return self.logText
    }

    /// SIGTERM, then SIGKILL if the server has not exited 15 seconds later. Never blocks the caller's thread: the
    /// wait runs on a thread of its own.
    func stop() {
        guard self.process.isRunning else { return }
        self.process.terminate()
        let process = self.process
        Thread.detachNewThread {
            let deadline = Date().addingTimeInterval(15)
            while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            process.signal(SIGKILL)
            process.waitUntilExit()
        }
    }

    /// SIGTERM, then polls for the exit (off the cooperative pool) for up to `timeout`, generous: a server gives work
    /// in flight `TOUCHSTONE_SHUTDOWN_GRACE_SECONDS` (10 by default) and its cancellation up to 5 more, and issue #44
    /// item 6 keeps wall-clock bounds out of tests. Then SIGKILL; false when it had to be killed.
    func stopAndWait(timeout: TimeInterval = 60) async -> Bool {
        let process = self.process
        if process.isRunning { process.terminate() }
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let deadline = Date().addingTimeInterval(timeout)
                while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
                let exited = !process.isRunning
                if !exited {
                    process.signal(SIGKILL)
                    process.waitUntilExit()
                }
                continuation.resume(returning: exited)
            }
        }
    }

    deinit { self.stop() }
}

struct ProcessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
