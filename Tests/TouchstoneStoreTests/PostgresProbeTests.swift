import Foundation
import Logging
import PostgresNIO
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@testable import TouchstoneStore

/// The PostgreSQL executor's recovery probe (opened while the database is unreachable, every 200 ms until one answers):
/// a server that takes the connection and never answers fails it within the probe's own timeout (PostgresNIO's took
/// about 10 s), so the monitor, and with it the instance's recovery, is never held by it. No database needed: the
/// server here is a socket that listens and never reads.
struct PostgresProbeTests {
    @Test(.timeLimit(.minutes(1))) func aServerThatNeverAnswersFailsTheProbeInsteadOfHoldingIt() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let configuration = PostgresConnection.Configuration(
            host: "127.0.0.1", port: listener.port, username: "touchstone", password: nil, database: "touchstone", tls: .disable)
        // The kernel completes the TCP handshake for the listen queue, so the connection opens and the start-up
        // message goes out; no answer ever comes.
        let answered = await PostgresExecutor.probe(configuration: configuration, timeout: .milliseconds(500), logger: Logger(label: "probe"))
        #expect(!answered)
        // And again: a second probe is not held up by the first one's abandoned attempt.
        #expect(await PostgresExecutor.probe(configuration: configuration, timeout: .milliseconds(500), logger: Logger(label: "probe")) == false)
    }

    @Test func boundedGivesUpOnAnOperationThatDoesNotFinish() async {
        let gate = AsyncStream<Void>.makeStream()
        let result = await PostgresExecutor.bounded(.milliseconds(100)) { () -> Int in
            for await _ in gate.stream {}
            return 1
        }
        #expect(result == nil)
        gate.continuation.finish()
        #expect(await PostgresExecutor.bounded(.seconds(30)) { 2 } == 2)
    }

    @Test func nothingListeningFailsTheProbe() async throws {
        let listener = try SilentListener()
        let port = listener.port
        listener.close()
        let configuration = PostgresConnection.Configuration(
            host: "127.0.0.1", port: port, username: "touchstone", password: nil, database: "touchstone", tls: .disable)
        #expect(await PostgresExecutor.probe(configuration: configuration, timeout: .seconds(10), logger: Logger(label: "probe")) == false)
    }
}

/// A TCP socket on 127.0.0.1 that listens and never accepts: connections complete in the kernel's queue and are never
/// read or answered.
final class SilentListener: Sendable {
    let descriptor: Int32
    let port: Int

    struct Failure: Error { let step: String }

    init() throws {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(step: "socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            closeDescriptor(descriptor)
            throw Failure(step: "bind/listen")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else {
            closeDescriptor(descriptor)
            throw Failure(step: "getsockname")
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        closeDescriptor(self.descriptor)
    }
}

private func closeDescriptor(_ descriptor: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(descriptor)
    #else
    _ = Darwin.close(descriptor)
    #endif
}
