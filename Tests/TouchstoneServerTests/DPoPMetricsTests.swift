import Foundation
import HTTPTypes
import Prometheus
import Testing
import TouchstoneCrypto
import TouchstoneTesting

@testable import TouchstoneServer

/// `touchstone_dpop_signature_cpu_seconds`: the CPU of a sample of the server's DPoP signature checks (what a
/// verification costs inside the server; `bench session` reads it to compare a bound call's cost with it).
struct DPoPMetricsTests {
    @Test func oneCheckInTheSamplingIntervalIsTimedAndEveryVerdictIsTheChecks() {
        let metrics = ServerMetrics(dpopSignatureSampling: 2)
        var verdicts: [Bool] = []
        for index in 0..<5 { verdicts.append(metrics.checkDPoPSignature { index != 3 }) }
        #expect(verdicts == [true, true, true, false, true])
        let samples = MetricsTests.parse(metrics.registry.emitToString())
        // The 2nd and 4th checks were timed: each a thread's CPU time, positive and well under a second.
        #expect(MetricsTests.value(samples, "touchstone_dpop_signature_cpu_seconds_count") == 2)
        let seconds = MetricsTests.value(samples, "touchstone_dpop_signature_cpu_seconds_sum")
        #expect(seconds >= 0 && seconds < 1)
        #expect(threadCPUNanoseconds() > 0)
    }

    @Test func boundCallsFeedTheMetric() async throws {
        try await TestServer.run(configuration: BoundSessionTests.configuration()) { client in
            let flow = Flow(client: client)
            let account = try await flow.signUp()
            let device = TestDeviceKey(.es256), phone = DPoPProofMaker.p256()
            let enrolled = try await BoundSessionTests.enrol(flow, account.token, device, phone)
            let registrationId = try #require(enrolled.value("registration", "id"))
            let session = try #require(try await flow.login(registrationId, device).value("session", "token"))
            let before = try await MetricsTests.scrape(client).samples
            // One check in 16 is timed (the server's default): of 16 calls in a row, exactly one.
            for _ in 0..<16 {
                #expect(try await BoundSessionTests.call(client, .get, "/v1/session", session: session, proof: phone).status == .ok)
            }
            let after = try await MetricsTests.scrape(client).samples
            let name = "touchstone_dpop_signature_cpu_seconds"
            #expect(MetricsTests.value(after, name + "_count") - MetricsTests.value(before, name + "_count") == 1)
            #expect(MetricsTests.value(after, name + "_sum") > MetricsTests.value(before, name + "_sum"))
        }
    }
}
