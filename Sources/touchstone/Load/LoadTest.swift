import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import TouchstoneCrypto

/// A bounded soak test: simulated devices sign in over and over; any 5xx answer or lost connection fails it.
struct LoadTest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loadtest",
        abstract: "Soak a running server with simulated devices; fail on any 5xx answer or lost connection.",
        discussion: """
            Enrols --devices simulated devices (half SDK phones with device keys, half passkey authenticators by \
            default), then runs complete sign-in ceremonies from all of them for --duration seconds and reports \
            completed ceremonies, errors by code and latency percentiles. Exits with status 1 when the server \
            answered any request with a 5xx status or dropped a connection. Loopback servers only; start the \
            server with TOUCHSTONE_RATE_LIMITS=off, or the limits meant for real clients will refuse the load \
            (they are counted as rate_limited, not as failures).
            """
    )

    @Option(name: .customLong("server"), help: "Server base URL (repeat for several instances), e.g. http://127.0.0.1:8080.")
    var servers: [String]

    @Option(name: .long, help: "Concurrent simulated devices.")
    var devices: Int = 8

    @Option(name: .long, help: "Seconds to run (at most 86400).")
    var duration: Double = 30

    @Option(name: .long, help: "mixed (default), biometric or passkey.")
    var kind: LoginBench.Kind = .mixed

    @Option(name: .long, help: "Origin the simulated browser reports for passkeys (default http://localhost:PORT, the server's default).")
    var origin: String?

    @Option(name: .customLong("confirm-every"), help: "Every Nth ceremony of a device-key device approves a transaction confirmation instead (0: never).")
    var confirmEvery: Int = 0

    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false

    func validate() throws {
        guard !self.servers.isEmpty else { throw ValidationError("give at least one --server") }
        guard (1...10_000).contains(self.devices) else { throw ValidationError("--devices must be 1...10000") }
        guard self.duration > 0, self.duration <= 86_400 else { throw ValidationError("--duration must be in (0, 86400]") }
        guard (0...1000).contains(self.confirmEvery) else { throw ValidationError("--confirm-every must be 0...1000") }
        for server in self.servers { _ = try LoopbackEndpoint(server) }
    }

    func run() async throws {
        let endpoints = try self.servers.map { try LoopbackEndpoint($0, origin: self.origin) }
        let eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let plan = LoadPlan(
            kind: self.kind,
            algorithm: .es256,
            devices: self.devices,
            warmup: 0,
            duration: self.duration,
            serverPids: [],
            confirmEvery: self.confirmEvery
        )
        let report: LoadReport
        do {
            report = try await LoadRunner(endpoints: endpoints, eventLoops: eventLoops).run(plan)
        } catch {
            try? await eventLoops.shutdownGracefully()
            throw error
        }
        try await eventLoops.shutdownGracefully()
        if self.json { try printJSON(report) } else { print(report.table) }
        let lostConnections = report.errors["transport", default: 0]
        if report.serverErrors > 0 || lostConnections > 0 {
            FileHandle.standardError.write(
                Data("loadtest FAILED: \(report.serverErrors) 5xx answers, \(lostConnections) lost connections\n".utf8)
            )
            throw ExitCode(1)
        }
    }
}
