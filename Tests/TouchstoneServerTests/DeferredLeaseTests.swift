import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing
import TouchstoneStore
import TouchstoneTesting

@testable import TouchstoneServer

/// Deferred work's leases with two workers (two instances on one database): a record is done once when its handler is
/// slow (a push to an Apple that takes its time), as long as one run fits in the 60-second lease.
struct DeferredLeaseTests {
    @Test func aRecordWaitingBehindSlowRunsIsNotDoneByTwoInstances() async throws {
        let clock = ManualClock()
        let store = try await SQLTouchstoneStore.sqlite(.memory, logger: Logger(label: "test"))
        try await store.migrate()
        let workers = (0..<2).map { _ in
            DeferredWork(store: store, logger: Logger(label: "test"), now: { clock.now }, randomBytes: TouchstoneDependencies.live.randomBytes)
        }
        // Each run takes 40 s on the test's clock; 30 s into the second run the first worker does, the other runs.
        let state = NIOLockedValueBox<(done: [String], meanwhile: DeferredWork?)>(([], workers[1]))
        for worker in workers {
            worker.register("slow") { lease in
                clock.advance(by: 30)
                let other = state.withLockedValue { state -> DeferredWork? in
                    guard state.done.count == 1 else { return nil }
                    defer { state.meanwhile = nil }
                    return state.meanwhile
                }
                if let other {
                    let ran = try await other.runDue()
                    #expect(ran == 0, "the other worker took a record this one holds")
                }
                clock.advance(by: 10)
                state.withLockedValue { $0.done.append(lease.work.subject) }
                try await lease.finish(in: store)
            }
        }
        try await workers[0].record("slow", subject: "first", in: store)
        clock.advance(by: 1)
        try await workers[0].record("slow", subject: "second", in: store)
        clock.advance(by: 1)
        #expect(try await workers[0].runDue() == 2)
        #expect(state.withLockedValue { $0.done } == ["first", "second"])
        #expect(try await workers[1].runDue() == 0)
    }
}
