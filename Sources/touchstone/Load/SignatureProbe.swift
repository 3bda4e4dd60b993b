import Foundation
import NIOCore
import TouchstoneKit

/// What the server's own DPoP signature checks cost while a benchmark ran (issue #43's "about one signature
/// verification"): `touchstone_dpop_signature_cpu_seconds` (a sample of checks, timed in the thread's CPU) read from
/// `GET /metrics` when the measured window opens and when it closes.
struct SignatureProbe: Sendable {
    let endpoint: LoopbackEndpoint
    let group: any EventLoopGroup

    /// The metric's sum (seconds) and count at one moment.
    struct Reading: Sendable, Equatable {
        var seconds: Double
        var count: Double
    }

    /// The mean CPU of a check timed between `first` and `last`, in µs; nil without readings or timed checks.
    static func meanMicroseconds(from first: Reading?, to last: Reading?) -> Double? {
        guard let first, let last, last.count > first.count else { return nil }
        return (last.seconds - first.seconds) / (last.count - first.count) * 1_000_000
    }

    /// The metric in a Prometheus text exposition; nil when it is not there.
    static func reading(in exposition: String) -> Reading? {
        var seconds: Double?
        var count: Double?
        for line in exposition.split(separator: "\n") where line.hasPrefix("touchstone_dpop_signature_cpu_seconds_") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let value = Double(parts[1]) else { continue }
            switch parts[0] {
            case "touchstone_dpop_signature_cpu_seconds_sum": seconds = value
            case "touchstone_dpop_signature_cpu_seconds_count": count = value
            default: break
            }
        }
        guard let seconds, let count else { return nil }
        return Reading(seconds: seconds, count: count)
    }

    /// The server's reading now; nil when `/metrics` is not served on the benchmark's address or does not answer.
    func read() async -> Reading? {
        guard let connection = try? await HTTPConnection.connect(host: self.endpoint.host, port: self.endpoint.port, group: self.group) else {
            return nil
        }
        let response = try? await connection.exchange(TransportRequest(method: "GET", path: "/metrics"))
        await connection.close()
        guard let response, response.status == 200 else { return nil }
        return Self.reading(in: String(decoding: response.body, as: UTF8.self))
    }

    /// Reads at `from` and at `until`: the mean CPU of the checks timed in between, in µs.
    func measure(from: ContinuousClock.Instant, until: ContinuousClock.Instant, clock: ContinuousClock) async -> Double? {
        try? await Task.sleep(until: from, clock: clock)
        let first = await self.read()
        try? await Task.sleep(until: until, clock: clock)
        return Self.meanMicroseconds(from: first, to: await self.read())
    }
}
