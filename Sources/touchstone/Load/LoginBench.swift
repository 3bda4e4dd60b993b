import ArgumentParser
import Foundation
import Histogram
import NIOCore
import NIOPosix
import TouchstoneCrypto
import TouchstoneKit

/// Complete sign-in ceremonies from simulated devices against running servers, measured end to end.
struct LoginBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Run complete sign-in ceremonies from simulated devices against a running server; report throughput and latency.",
        discussion: """
            Each device is a real SDK instance (BiometricLogin with a software key) or a virtual passkey \
            authenticator, on its own keep-alive connection. Devices are enrolled through the API first (one account \
            each; a server started with TOUCHSTONE_BCRYPT_COST=4 enrols quickly), then loop over ceremonies: --warmup \
            seconds unmeasured, then --duration seconds measured. Several --server URLs spread the devices round-robin \
            over instances sharing one database. Loopback addresses only.
            """
    )

    enum Kind: String, ExpressibleByArgument, Codable, Sendable {
        case biometric
        case passkey
        /// Half the devices of each (the soak test's default).
        case mixed
    }

    @Option(name: .customLong("server"), help: "Server base URL (repeat for several instances), e.g. http://127.0.0.1:8080.")
    var servers: [String]

    @Option(name: .long, help: "Concurrent simulated devices.")
    var devices: Int = 16

    @Option(name: .long, help: "Seconds measured.")
    var duration: Double = 10

    @Option(name: .long, help: "Seconds run before measuring.")
    var warmup: Double = 1

    @Option(
        name: .long,
        help: "Ceremonies each device completes while measuring at least: a device short of them measures past --duration (tests, whose window must not depend on the machine's speed; the rate is over the time measured)."
    )
    var minCeremonies: Int = 0

    @Option(name: .long, help: "biometric (device key: start, sign, finish) or passkey (options, assertion, verify).")
    var kind: Kind = .biometric

    @Option(name: .long, help: "Device key algorithm for biometric ceremonies: ES256, EdDSA or RS256.")
    var algorithm: SignatureAlgorithm = .es256

    @Option(name: .long, help: "Origin the simulated browser reports for passkeys (default http://localhost:PORT, the server's default).")
    var origin: String?

    @Option(name: .customLong("server-pid"), help: "Process id of a server, to report its memory (repeatable; reads /proc).")
    var serverPids: [Int32] = []

    @Option(name: .long, help: "Event-loop threads of the load generator.")
    var threads: Int = 1

    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false

    func validate() throws {
        guard !self.servers.isEmpty else { throw ValidationError("give at least one --server") }
        guard (1...10_000).contains(self.devices) else { throw ValidationError("--devices must be 1...10000") }
        guard self.duration > 0, self.duration <= 3600, self.warmup >= 0, self.warmup <= 600 else {
            throw ValidationError("--duration must be in (0, 3600] and --warmup in [0, 600]")
        }
        guard (1...64).contains(self.threads) else { throw ValidationError("--threads must be 1...64") }
        guard (0...1000).contains(self.minCeremonies) else { throw ValidationError("--min-ceremonies must be 0...1000") }
        for server in self.servers { _ = try LoopbackEndpoint(server) }
    }

    func run() async throws {
        let endpoints = try self.servers.map { try LoopbackEndpoint($0, origin: self.origin) }
        let eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: self.threads)
        let plan = LoadPlan(
            kind: self.kind,
            algorithm: self.algorithm,
            devices: self.devices,
            warmup: self.warmup,
            duration: self.duration,
            serverPids: self.serverPids,
            minimumPerDevice: self.minCeremonies
        )
        let report: LoadReport
        do {
            report = try await LoadRunner(endpoints: endpoints, eventLoops: eventLoops).run(plan)
        } catch {
            try? await eventLoops.shutdownGracefully()
            throw error
        }
        try await eventLoops.shutdownGracefully()
        if self.json {
            try printJSON(report)
        } else {
            print(report.table)
        }
    }
}
