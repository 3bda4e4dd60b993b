import ArgumentParser
import Foundation
import Histogram
import NIOConcurrencyHelpers
import NIOCore
import TouchstoneCrypto
import TouchstoneKit
import TouchstoneWebAuthn

/// A server to load: `http://` on a loopback address (the generator refuses to load anything else).
struct LoopbackEndpoint: Sendable {
    var url: String
    var host: String
    var port: Int
    /// What the simulated browser reports as its origin (passkeys): by default the server's own default origin,
    /// `http://localhost:PORT`.
    var origin: String

    init(_ string: String, origin: String? = nil) throws {
        guard let components = URLComponents(string: string), components.scheme == "http", let host = components.host else {
            throw ValidationError("--server must be an http:// URL: \(string)")
        }
        guard host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]" else {
            throw ValidationError("--server must be on loopback (127.0.0.1, localhost or ::1): \(string)")
        }
        self.url = string
        self.host = host == "localhost" ? "127.0.0.1" : host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        self.port = components.port ?? 80
        self.origin = origin ?? "http://localhost:\(self.port)"
    }
}

struct LoadPlan: Sendable {
    var kind: LoginBench.Kind
    var algorithm: SignatureAlgorithm
    var devices: Int
    var warmup: Double
    var duration: Double
    var serverPids: [Int32]
    /// Every Nth ceremony of a device-key device approves a transaction confirmation instead of signing in (0: never).
    var confirmEvery: Int = 0
    /// Ceremonies each device completes in the measured window at least: a device short of them keeps measuring past
    /// `duration` (for at most ten times as long), and the rate is over the time actually measured. For tests, whose
    /// window must not depend on the machine's speed; 0 (a benchmark) never extends the window.
    var minimumPerDevice: Int = 0
}

struct LoadReport: Codable, Sendable {
    struct Latency: Codable, Sendable {
        var p50: Double
        var p90: Double
        var p99: Double
        var max: Double
        var mean: Double

        /// Milliseconds, from a histogram of microseconds.
        init(microseconds histogram: Histogram<UInt64>) {
            let millis = { (value: UInt64) in Double(value) / 1000 }
            self.p50 = millis(histogram.valueAtPercentile(50))
            self.p90 = millis(histogram.valueAtPercentile(90))
            self.p99 = millis(histogram.valueAtPercentile(99))
            self.max = millis(histogram.max)
            self.mean = histogram.totalCount == 0 ? 0 : histogram.mean / 1000
        }
    }
    struct ServerMemory: Codable, Sendable {
        var pid: Int32
        /// Highest resident set size sampled while measuring.
        var peakRSSMiB: Double
        /// The kernel's high-water mark of the process's resident set since it started (VmHWM).
        var highWaterMarkMiB: Double
    }
    var kind: LoginBench.Kind
    var algorithm: String?
    var servers: [String]
    var devices: Int
    var durationSeconds: Double
    var ceremonies: Int
    var ceremoniesPerSecond: Double
    /// Of the ceremonies, how many were approved confirmations.
    var confirmations: Int = 0
    /// Milliseconds from a ceremony's first request to its session.
    var latencyMs: Latency
    /// Failed ceremonies by error code (the server's code, or the SDK's).
    var errors: [String: Int]
    /// Failed ceremonies whose answer was a 5xx status.
    var serverErrors: Int
    var serverMemory: [ServerMemory]
    /// CPU time the servers (`--server-pid`) and this load generator spent per measured ceremony, in microseconds
    /// (user + system, from `/proc/PID/stat`): the cost of a ceremony, independent of how busy the machine was.
    var serverCPUMicrosecondsPerCeremony: Double?
    var generatorCPUMicrosecondsPerCeremony: Double?

    var table: String {
        var lines = [
            "\(self.kind.rawValue) ceremonies, \(self.devices) devices, \(self.servers.count) server(s), \(Self.format(self.durationSeconds, 1)) s measured",
            "  completed     \(self.ceremonies)  (\(Self.format(self.ceremoniesPerSecond, 0)) per second)"
                + (self.confirmations > 0 ? ", \(self.confirmations) of them confirmations" : ""),
            "  latency ms    p50 \(Self.format(self.latencyMs.p50, 2))  p90 \(Self.format(self.latencyMs.p90, 2))  p99 \(Self.format(self.latencyMs.p99, 2))  max \(Self.format(self.latencyMs.max, 2))",
            "  errors        " + (self.errors.isEmpty ? "none" : self.errors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")),
            "  5xx answers   \(self.serverErrors)",
        ]
        if let server = self.serverCPUMicrosecondsPerCeremony, let generator = self.generatorCPUMicrosecondsPerCeremony {
            lines.append("  CPU/ceremony  server \(Self.format(server, 0)) µs, load generator \(Self.format(generator, 0)) µs")
        }
        for memory in self.serverMemory {
            lines.append("  server \(memory.pid)  peak RSS \(Self.format(memory.peakRSSMiB, 1)) MiB while measuring, high-water mark \(Self.format(memory.highWaterMarkMiB, 1)) MiB")
        }
        return lines.joined(separator: "\n")
    }

    private static func format(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
}

/// Enrols simulated devices, runs their ceremonies concurrently and collects the measurements.
struct LoadRunner: Sendable {
    let endpoints: [LoopbackEndpoint]
    let eventLoops: any EventLoopGroup

    func run(_ plan: LoadPlan) async throws -> LoadReport {
        let runId = String(UUID().uuidString.prefix(8)).lowercased()
        let devices = try await self.enrol(plan, runId: runId)
        let clock = ContinuousClock()
        let start = clock.now
        let measureFrom = start + .milliseconds(Int(plan.warmup * 1000))
        let end = measureFrom + .milliseconds(Int(plan.duration * 1000))
        let sampler = MemorySampler(pids: plan.serverPids)

        let results = try await withThrowingTaskGroup(of: DeviceResult.self) { group in
            for device in devices {
                group.addTask {
                    await device.loop(measureFrom: measureFrom, until: end, minimum: plan.minimumPerDevice, clock: clock)
                }
            }
            group.addTask {
                await sampler.sample(from: measureFrom, until: end, clock: clock)
                return DeviceResult()
            }
            var total = DeviceResult()
            for try await result in group { total.merge(result) }
            return total
        }
        for device in devices { await device.close() }

        let histogram = results.histogram
        // Past the planned window only when a device was short of its minimum.
        let measured = results.lastFinish.map { max(plan.duration, Self.seconds(measureFrom.duration(to: $0))) } ?? plan.duration
        let cpu = sampler.cpuSeconds()
        let perCeremony = { (seconds: Double?) in seconds.map { results.completed > 0 ? $0 * 1_000_000 / Double(results.completed) : 0 } }
        return LoadReport(
            kind: plan.kind,
            algorithm: plan.kind == .passkey ? "ES256" : plan.algorithm.rawValue,
            servers: self.endpoints.map(\.url),
            devices: plan.devices,
            durationSeconds: measured,
            ceremonies: results.completed,
            ceremoniesPerSecond: Double(results.completed) / measured,
            confirmations: results.confirmations,
            latencyMs: LoadReport.Latency(microseconds: histogram),
            errors: results.errors,
            serverErrors: results.serverErrors,
            serverMemory: sampler.report(),
            serverCPUMicrosecondsPerCeremony: plan.serverPids.isEmpty ? nil : perCeremony(cpu.server),
            generatorCPUMicrosecondsPerCeremony: perCeremony(cpu.generator)
        )
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Enrols the devices, eight at a time (enrolment hashes passwords; it is not what is measured).
    private func enrol(_ plan: LoadPlan, runId: String) async throws -> [SimulatedDevice] {
        try await withThrowingTaskGroup(of: SimulatedDevice.self) { group in
            var next = 0
            var devices: [SimulatedDevice] = []
            func addNext() {
                let index = next
                let endpoint = self.endpoints[index % self.endpoints.count]
                let eventLoops = self.eventLoops
                next += 1
                group.addTask {
                    try await SimulatedDevice.enrol(
                        email: "bench-\(runId)-\(index)@bench.invalid",
                        endpoint: endpoint,
                        kind: plan.kind == .mixed ? (index.isMultiple(of: 2) ? .biometric : .passkey) : plan.kind,
                        algorithm: plan.algorithm,
                        confirmEvery: plan.confirmEvery,
                        eventLoops: eventLoops
                    )
                }
            }
            for _ in 0..<min(8, plan.devices) { addNext() }
            while let device = try await group.next() {
                devices.append(device)
                if next < plan.devices { addNext() }
            }
            return devices
        }
    }
}

/// What one device measured.
struct DeviceResult: Sendable {
    var completed = 0
    var confirmations = 0
    var errors: [String: Int] = [:]
    var serverErrors = 0
    /// Ceremony latency in microseconds.
    var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
    /// When the last counted ceremony ended.
    var lastFinish: ContinuousClock.Instant?

    mutating func merge(_ other: DeviceResult) {
        if let theirs = other.lastFinish { self.lastFinish = max(self.lastFinish ?? theirs, theirs) }
        self.completed += other.completed
        self.confirmations += other.confirmations
        self.errors.merge(other.errors, uniquingKeysWith: +)
        self.serverErrors += other.serverErrors
        self.histogram.add(other.histogram)
    }
}

/// One simulated phone (SDK + software key) or browser (virtual passkey authenticator) with its own connection.
final class SimulatedDevice: Sendable {
    private enum Role {
        case biometric(BiometricLogin, NIOLockedValueBox<TouchstoneSession>)
        case passkey(TouchstoneClient, NIOLockedValueBox<VirtualAuthenticator.Credential>, origin: String)
    }

    private let role: Role
    private let connection: HTTPConnection
    private let confirmEvery: Int
    private let ceremonies = NIOLockedValueBox(0)

    private init(role: Role, connection: HTTPConnection, confirmEvery: Int) {
        self.role = role
        self.connection = connection
        self.confirmEvery = confirmEvery
    }

    static func enrol(
        email: String,
        endpoint: LoopbackEndpoint,
        kind: LoginBench.Kind,
        algorithm: SignatureAlgorithm,
        confirmEvery: Int = 0,
        eventLoops: any EventLoopGroup
    ) async throws -> SimulatedDevice {
        let connection = try await HTTPConnection.connect(host: endpoint.host, port: endpoint.port, group: eventLoops)
        let client = TouchstoneClient(transport: connection)
        let password = "bench-" + Base64.urlEncode((0..<12).map { _ in UInt8.random(in: 0...255) })
        let session = try await client.createUser(email: email, password: password)
        switch kind {
        case .biometric:
            let login = BiometricLogin(
                client: client,
                keyStore: SoftwareKeyStore(),
                verifier: ScriptedVerifier.alwaysApprove(),
                stateStore: InMemoryStateStore(),
                algorithm: algorithm
            )
            try await login.enable(session: session, deviceName: "bench device")
            return SimulatedDevice(role: .biometric(login, NIOLockedValueBox(session)), connection: connection, confirmEvery: confirmEvery)
        case .passkey, .mixed:
            let options = try await client.passkeyRegistrationOptions(token: session.session.token)
            let (credential, response) = try VirtualAuthenticator().respond(toCreationOptions: Array(options), origin: endpoint.origin)
            _ = try await client.verifyPasskeyRegistration(token: session.session.token, responseJSON: Data(response))
            return SimulatedDevice(
                role: .passkey(client, NIOLockedValueBox(credential), origin: endpoint.origin),
                connection: connection,
                confirmEvery: confirmEvery
            )
        }
    }

    /// One complete sign-in, or (every `confirmEvery`th time on a device-key device) one approved confirmation.
    /// Returns whether it was a confirmation.
    @discardableResult
    func ceremony() async throws -> Bool {
        let count = self.ceremonies.withLockedValue { value -> Int in
            value += 1
            return value
        }
        switch self.role {
        case .biometric(let login, let sessionBox):
            if self.confirmEvery > 0 && count.isMultiple(of: self.confirmEvery) {
                try await self.confirmation(login, sessionBox)
                return true
            }
            let session = try await login.login(reason: "bench")
            sessionBox.withLockedValue { $0 = session }
        case .passkey(let client, let credentialBox, let origin):
            let options = try await client.passkeyAuthenticationOptions()
            var credential = credentialBox.withLockedValue { $0 }
            let response = try VirtualAuthenticator().respond(toRequestOptions: Array(options), credential: &credential, origin: origin)
            credentialBox.withLockedValue { $0 = credential }
            _ = try await client.verifyPasskeyAuthentication(responseJSON: Data(response))
        }
        return false
    }

    /// The app makes a confirmation with its session; the device reads it, signs it and approves it.
    private func confirmation(_ login: BiometricLogin, _ sessionBox: NIOLockedValueBox<TouchstoneSession>) async throws {
        let session = sessionBox.withLockedValue { $0 }
        let created: ConfirmationRequest
        do {
            created = try await login.client.createConfirmation(summary: "Pay €\(Int.random(in: 1...999)).00 to ACME Ltd", token: session.session.token)
        } catch let error as BiometricLoginError where error.code == .sessionEnded || error.httpStatus == 401 {
            let fresh = try await login.login(reason: "bench")
            sessionBox.withLockedValue { $0 = fresh }
            created = try await login.client.createConfirmation(summary: "Pay €1.00 to ACME Ltd", token: fresh.session.token)
        }
        _ = try await login.confirm(created)
    }

    /// Runs ceremonies back to back until `end`, measuring those that start at or after `measureFrom`; past `end`
    /// while fewer than `minimum` were counted (for at most ten times the window).
    func loop(measureFrom: ContinuousClock.Instant, until end: ContinuousClock.Instant, minimum: Int = 0, clock: ContinuousClock) async
        -> DeviceResult
    {
        var result = DeviceResult()
        let limit = end + (end - measureFrom) * 10
        while true {
            let started = clock.now
            let short = result.completed < minimum && started < limit
            guard started < end || short else { break }
            let measured = started >= measureFrom
            do {
                let confirmed = try await self.ceremony()
                let finished = clock.now
                // A ceremony that ends after the window would inflate the count; it is not counted, unless the device
                // is still short of its minimum (then the window is what was measured).
                guard measured, finished <= end || short else { continue }
                result.completed += 1
                result.lastFinish = finished
                if confirmed { result.confirmations += 1 }
                let (seconds, attoseconds) = (finished - started).components
                _ = result.histogram.record(UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000))
            } catch {
                if measured { result.errors[Self.code(of: error), default: 0] += 1 }
                // Counted whether measured or not: a soak test fails on any of them.
                if let status = (error as? BiometricLoginError)?.httpStatus, status >= 500 { result.serverErrors += 1 }
                if case .transport = (error as? BiometricLoginError)?.code { break }  // the connection is gone
            }
        }
        return result
    }

    func close() async {
        await self.connection.close()
    }

    private static func code(of error: any Error) -> String {
        if let error = error as? BiometricLoginError { return error.serverCode ?? error.code.rawValue }
        if error is VirtualAuthenticator.OptionsError { return "authenticator_refused" }
        return "unexpected"
    }
}

/// Samples the resident set of server processes from `/proc` while the load runs.
final class MemorySampler: Sendable {
    private let pids: [Int32]
    private let peaks: NIOLockedValueBox<[Int32: Double]>
    /// CPU seconds of the servers and of this process at the start and the end of the measured window.
    private let cpu = NIOLockedValueBox<(start: (Double, Double)?, end: (Double, Double)?)>((nil, nil))

    init(pids: [Int32]) {
        self.pids = pids
        self.peaks = NIOLockedValueBox([:])
    }

    func sample(from start: ContinuousClock.Instant, until end: ContinuousClock.Instant, clock: ContinuousClock) async {
        try? await Task.sleep(until: start, clock: clock)
        let atStart = self.cpuNow()
        self.cpu.withLockedValue { $0.start = atStart }
        defer {
            let atEnd = self.cpuNow()
            self.cpu.withLockedValue { $0.end = atEnd }
        }
        while clock.now < end {
            for pid in self.pids {
                guard let rss = Self.field("VmRSS", pid: pid) else { continue }
                self.peaks.withLockedValue { $0[pid] = max($0[pid] ?? 0, rss) }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// CPU seconds used in the measured window: the servers' together, and this process's.
    func cpuSeconds() -> (server: Double?, generator: Double?) {
        let (start, end) = self.cpu.withLockedValue { $0 }
        guard let start, let end else { return (nil, nil) }
        return (end.0 - start.0, end.1 - start.1)
    }

    private func cpuNow() -> (Double, Double) {
        (self.pids.compactMap(Self.cpuSeconds(pid:)).reduce(0, +), Self.cpuSeconds(pid: nil) ?? 0)
    }

    /// utime + stime of `/proc/PID/stat` (this process for nil), in seconds.
    static func cpuSeconds(pid: Int32?) -> Double? {
        let path = pid.map { "/proc/\($0)/stat" } ?? "/proc/self/stat"
        guard let stat = try? String(contentsOfFile: path, encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        // After the command name: state is field 3, utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func report() -> [LoadReport.ServerMemory] {
        let peaks = self.peaks.withLockedValue { $0 }
        return self.pids.map { pid in
            LoadReport.ServerMemory(pid: pid, peakRSSMiB: peaks[pid] ?? 0, highWaterMarkMiB: Self.field("VmHWM", pid: pid) ?? 0)
        }
    }

    /// A `kB` field of `/proc/PID/status`, in MiB.
    static func field(_ name: String, pid: Int32) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            let number = line.dropFirst(name.count + 1).split(whereSeparator: \.isWhitespace).first.flatMap { Double($0) }
            return number.map { $0 / 1024 }
        }
        return nil
    }
}
