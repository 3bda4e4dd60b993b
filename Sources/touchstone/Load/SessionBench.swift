import ArgumentParser
import Foundation
import Histogram
import NIOPosix
import TouchstoneCrypto
import TouchstoneKit

/// Calls with a session, bearer or bound to the phone's proof key (DPoP), side by side (issue #43).
struct SessionBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Call GET /v1/session with phones' sessions, as bearer tokens or bound to their DPoP proof keys; report throughput.",
        discussion: """
            Each phone is a real SDK instance (BiometricLogin, software keys) on its own keep-alive connection: it \
            signs up, enables biometrics and signs in once, then loops on GET /v1/session. With --dpop the enrolment \
            registers a proof key, so every call carries a DPoP proof (one ES256 signature by the phone, one \
            verification and one jti record by the server); without, the key store keeps no proof key and the session \
            is a bearer token.
            """
    )

    @Option(name: .long, help: "Server base URL, e.g. http://127.0.0.1:8080 (loopback only).")
    var server: String

    @Option(name: .long, help: "Concurrent simulated phones.")
    var phones: Int = 32

    @Option(name: .long, help: "Seconds measured.")
    var duration: Double = 10

    @Option(name: .long, help: "Seconds run before measuring.")
    var warmup: Double = 1

    @Flag(name: .long, help: "Sessions bound to a proof key (DPoP proofs on every call).")
    var dpop = false

    @Option(name: .long, help: "Calls per second in all, spread evenly over the phones (default: as fast as they go). At one rate, bearer and bound calls compare by the server's CPU per call alone.")
    var rate: Double?

    @Option(name: .customLong("server-pid"), help: "Process id of the server, to report its CPU per call.")
    var serverPids: [Int32] = []

    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false

    func validate() throws {
        guard (1...10_000).contains(self.phones) else { throw ValidationError("--phones must be 1...10000") }
        if let rate = self.rate, !(rate > 0 && rate <= 1_000_000) { throw ValidationError("--rate must be in (0, 1000000]") }
        guard self.duration > 0, self.duration <= 3600, self.warmup >= 0, self.warmup <= 600 else {
            throw ValidationError("--duration must be in (0, 3600] and --warmup in [0, 600]")
        }
        _ = try LoopbackEndpoint(self.server)
    }

    /// A key store that keeps no proof keys: the bearer side of the comparison.
    struct BearerKeyStore: DeviceKeyStore {
        let inner = SoftwareKeyStore()
        var supportedAlgorithms: [SignatureAlgorithm] { self.inner.supportedAlgorithms }
        func createKey(tag: String, algorithm: SignatureAlgorithm, policy: KeyAccessPolicy) async throws -> DeviceKeyPublicKey {
            try await self.inner.createKey(tag: tag, algorithm: algorithm, policy: policy)
        }
        func sign(_ message: [UInt8], withKey tag: String, verification: UserVerification) async throws -> [UInt8] {
            try await self.inner.sign(message, withKey: tag, verification: verification)
        }
        func deleteKey(tag: String) async throws { try await self.inner.deleteKey(tag: tag) }
        func keyExists(tag: String) async -> Bool { await self.inner.keyExists(tag: tag) }
    }

    /// The connection, with the server's URL for `htu`.
    struct Transport: TouchstoneTransport {
        let connection: HTTPConnection
        let serverURL: URL?
        func send(_ request: TransportRequest) async throws -> TransportResponse { try await self.connection.send(request) }
    }

    func run() async throws {
        let endpoint = try LoopbackEndpoint(self.server)
        let group = MultiThreadedEventLoopGroup.singleton
        let runId = String(UUID().uuidString.prefix(8)).lowercased()
        let dpop = self.dpop
        let base = URL(string: self.server)
        var phones: [(TouchstoneClient, String)] = []
        for start in stride(from: 0, to: self.phones, by: 8) {
            try await withThrowingTaskGroup(of: (TouchstoneClient, String).self) { tasks in
                for index in start..<min(start + 8, self.phones) {
                    tasks.addTask {
                        let connection = try await HTTPConnection.connect(host: endpoint.host, port: endpoint.port, group: group)
                        let client = TouchstoneClient(transport: Transport(connection: connection, serverURL: base))
                        let keyStore: any DeviceKeyStore = dpop ? SoftwareKeyStore() : BearerKeyStore()
                        let login = BiometricLogin(client: client, keyStore: keyStore, verifier: ScriptedVerifier.alwaysApprove(),
                            stateStore: InMemoryStateStore())
                        let account = try await client.createUser(email: "session-bench-\(runId)-\(index)@example.com", password: "bench password \(index)")
                        try await login.enable(session: account)
                        let session = try await login.login(reason: "bench")
                        guard await client.isBound(session) == dpop else { throw ValidationError("the session is not bound as asked") }
                        return (client, session.session.token)
                    }
                }
                for try await phone in tasks { phones.append(phone) }
            }
        }
        let clock = ContinuousClock()
        let measureFrom = clock.now + .milliseconds(Int(self.warmup * 1000))
        let end = measureFrom + .milliseconds(Int(self.duration * 1000))
        let sampler = MemorySampler(pids: self.serverPids)
        let probe = Task { await SignatureProbe(endpoint: endpoint, group: group).measure(from: measureFrom, until: end, clock: clock) }
        // With --rate, each phone calls once per interval (phones / rate), starting at staggered offsets; a phone behind
        // its schedule calls at once but never saves up more than one missed call.
        let interval: Duration? = self.rate.map { .nanoseconds(Int64(Double(self.phones) / $0 * 1e9)) }
        let phoneCount = phones.count
        let results = try await withThrowingTaskGroup(of: DeviceResult.self) { tasks in
            for (index, (client, token)) in phones.enumerated() {
                tasks.addTask {
                    var result = DeviceResult()
                    var next = interval.map { clock.now + $0 * index / phoneCount } ?? clock.now
                    while clock.now < end {
                        if let interval {
                            let now = clock.now
                            if next > now { try await Task.sleep(until: next, clock: clock) } else if now - next > interval { next = now }
                            next += interval
                        }
                        let started = clock.now
                        do {
                            _ = try await client.currentSession(token: token)
                            if started >= measureFrom {
                                result.completed += 1
                                let elapsed = started.duration(to: clock.now)
                                result.histogram.record(UInt64(elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000))
                            }
                        } catch let error as BiometricLoginError {
                            if started >= measureFrom {
                                result.errors[error.serverCode ?? error.code.rawValue, default: 0] += 1
                                if (error.httpStatus ?? 0) >= 500 { result.serverErrors += 1 }
                            }
                        }
                    }
                    return result
                }
            }
            tasks.addTask {
                await sampler.sample(from: measureFrom, until: end, clock: clock)
                return DeviceResult()
            }
            var total = DeviceResult()
            for try await result in tasks { total.merge(result) }
            return total
        }
        let cpu = sampler.cpuSeconds()
        let signatureCPU = await probe.value
        let report = OpenIDBench.Report(
            mode: dpop ? "dpop-session" : "bearer-session",
            browsers: self.phones,
            durationSeconds: self.duration,
            completed: results.completed,
            perSecond: Double(results.completed) / self.duration,
            latencyMs: LoadReport.Latency(microseconds: results.histogram),
            errors: results.errors,
            serverErrors: results.serverErrors,
            serverMemory: sampler.report(),
            serverCPUMicrosecondsPerOperation: self.serverPids.isEmpty || results.completed == 0
                ? nil : cpu.server.map { $0 * 1_000_000 / Double(results.completed) },
            serverSignatureCPUMicroseconds: signatureCPU
        )
        if self.json {
            try printJSON(report)
        } else {
            print("GET /v1/session with \(dpop ? "DPoP-bound" : "bearer") sessions, \(self.phones) phones, \(self.duration) s measured")
            print("  completed     \(report.completed)  (\(Int(report.perSecond)) per second)")
            print(String(format: "  latency ms    p50 %.2f  p90 %.2f  p99 %.2f", report.latencyMs.p50, report.latencyMs.p90, report.latencyMs.p99))
            if let cpu = report.serverCPUMicrosecondsPerOperation { print(String(format: "  server CPU    %.0f µs per call", cpu)) }
            if let check = report.serverSignatureCPUMicroseconds {
                print(String(format: "  server CPU    %.1f µs per proof signature check (a sample, from /metrics)", check))
            }
            print("  errors        " + (report.errors.isEmpty ? "none" : report.errors.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " ")))
        }
    }
}
