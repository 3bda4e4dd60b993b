public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for the tests that run the `touchstone` binary and scripts.
///
/// Foundation's `Process.run()` on Linux (Swift 6.3.1) lists `/proc/self/fd` with a 256-byte copy of each directory
/// entry and crashes the whole test process now and then (swift-corelibs-foundation pull request 5472, fixed after
/// this toolchain); a suite that starts hundreds of children meets it. This is the small part of `Process` the tests
/// use, without that scan: the child's standard streams are pipes, a file or `/dev/null`, every other descriptor of
/// the test process is closed in the child, and the child is reaped with `waitpid`.
public final class ChildProcess: @unchecked Sendable {
    /// Where a standard stream goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A pipe: ``standardInput`` (to write) or ``standardOutput`` / ``standardError`` (to read).
        case pipe
        /// A file, created or truncated.
        case file(String)
        /// Standard error only: wherever standard output goes.
        case sameAsOutput
    }

    public let processIdentifier: pid_t
    /// The write end of the child's standard input, when it is a pipe.
    public let standardInput: FileHandle?
    /// The read ends of the child's standard output and error, when they are pipes.
    public let standardOutput: FileHandle?
    public let standardError: FileHandle?

    private let lock = NSLock()
    private var status: Int32?

    /// Starts `executable` with `arguments` (without the program name) and `environment` (default: this process's).
    public init(
        executable: String,
        arguments: [String],
        environment: [String: String]? = nil,
        input: Stream = .null,
        output: Stream = .null,
        error: Stream = .null
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32: FileHandle] = [:]
        var childEnds: [Int32] = []
        defer { childEnds.forEach { _ = close($0) } }

        for (target, stream) in [(Int32(0), input), (1, output), (2, error)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            case .sameAsOutput:
                posix_spawn_file_actions_adddup2(&actions, 1, target)
            case .pipe:
                var fds: [Int32] = [-1, -1]
                guard pipe(&fds) == 0 else { throw ChildProcessError("pipe: errno \(errno)") }
                // Close-on-exec, so that no other child inherits them (pipe2 is not in Swift's Glibc module).
                fds.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
                let (childEnd, parentEnd) = target == 0 ? (fds[0], fds[1]) : (fds[1], fds[0])
                childEnds.append(childEnd)
                parentEnds[target] = FileHandle(fileDescriptor: parentEnd, closeOnDealloc: true)
                posix_spawn_file_actions_adddup2(&actions, childEnd, target)
            }
        }
        Self.closeEverythingElse(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A process group of its own, as Foundation's Process does: a signal to the test runner's group stays there.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw ChildProcessError("posix_spawn \(executable): errno \(result)") }
        self.processIdentifier = pid
        self.standardInput = parentEnds[0]
        self.standardOutput = parentEnds[1]
        self.standardError = parentEnds[2]
    }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34 and later), looked up at run time because Swift's Glibc
    /// module does not declare it. Without it only the pipes made here are kept from the child (they are close-on-exec).
    private static func closeEverythingElse(_ actions: inout posix_spawn_file_actions_t) {
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3)
    }

    /// Whether the child has not exited yet (reaps it when it has).
    public var isRunning: Bool {
        self.lock.withLock {
            if self.status != nil { return false }
            var raw: Int32 = 0
            guard waitpid(self.processIdentifier, &raw, WNOHANG) == self.processIdentifier else { return true }
            self.status = raw
            return false
        }
    }

    /// Blocks until the child exits. Call it off the cooperative thread pool.
    public func waitUntilExit() {
        if !self.isRunning { return }
        var raw: Int32 = 0
        while waitpid(self.processIdentifier, &raw, 0) == -1 && errno == EINTR {}
        self.lock.withLock { if self.status == nil { self.status = raw } }
    }

    /// The exit code, or 128 + the signal that ended the child (as a shell reports it); -1 while it runs.
    public var terminationStatus: Int32 {
        guard let raw = self.lock.withLock({ self.status }) else { return -1 }
        let signal = raw & 0x7F
        return signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
    }

    /// Sends SIGTERM.
    public func terminate() { self.signal(SIGTERM) }

    public func signal(_ signal: Int32) {
        if self.isRunning { kill(self.processIdentifier, signal) }
    }
}

extension ChildProcess {
    /// Runs `executable` to completion, off the cooperative thread pool: writes `input` to its standard input, reads
    /// its standard output and error (both at once, so neither pipe fills up), and returns them with the exit status.
    /// A child still running after `timeout` seconds is killed.
    public static func run(
        _ executable: String,
        _ arguments: [String],
        input: [UInt8]? = nil,
        environment: [String: String]? = nil,
        timeout: TimeInterval = 300
    ) async throws -> (status: Int32, output: String, error: String) {
        let child = try ChildProcess(
            executable: executable,
            arguments: arguments,
            environment: environment,
            input: input == nil ? .null : .pipe,
            output: .pipe,
            error: .pipe
        )
        let watchdog = DispatchWorkItem { child.signal(SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog)
        defer { watchdog.cancel() }
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                if let input, let handle = child.standardInput {
                    handle.write(Data(input))
                    try? handle.close()
                }
                let errorRead = DispatchSemaphore(value: 0)
                nonisolated(unsafe) var errors = Data()
                Thread.detachNewThread {
                    errors = child.standardError?.readDataToEndOfFile() ?? Data()
                    errorRead.signal()
                }
                let output = child.standardOutput?.readDataToEndOfFile() ?? Data()
                errorRead.wait()
                child.waitUntilExit()
                continuation.resume(
                    returning: (child.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
                )
            }
        }
    }
}

public struct ChildProcessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
