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

    @Test func aWorkerLeavesTheKindsItCannotDoToOneThatCan() async throws {
        let clock = ManualClock()
        let store = try await SQLTouchstoneStore.sqlite(.memory, logger: Logger(label: "test"))
        try await store.migrate()
        // One instance without push configured (no handler for "push"), one with.
        let without = DeferredWork(store: store, logger: Logger(label: "test"), now: { clock.now }, randomBytes: TouchstoneDependencies.live.randomBytes)
        let with = DeferredWork(store: store, logger: Logger(label: "test"), now: { clock.now }, randomBytes: TouchstoneDependencies.live.randomBytes)
        let attempts = NIOLockedValueBox<[String: Int]>([:])
        for worker in [without, with] {
            worker.register("mail") { lease in
                attempts.withLockedValue { $0[lease.work.subject] = lease.work.attempts }
                try await lease.finish(in: store)
            }
        }
        with.register("push") { lease in
            attempts.withLockedValue { $0[lease.work.subject] = lease.work.attempts }
            try await lease.finish(in: store)
        }
        try await without.record("push", subject: "a push", in: store)
        try await without.record("mail", subject: "a mail", in: store)
        // Many rounds of the worker that cannot push: it does the mail, and neither holds nor counts against the push.
        for _ in 0..<10 {
            _ = try await without.runDue()
            clock.advance(by: 1)
        }
        #expect(attempts.withLockedValue { $0 } == ["a mail": 1])
        // The other instance pushes at once, on its first attempt (leased to nobody; ten rounds used none of its eight).
        #expect(try await with.runDue() == 1)
        #expect(attempts.withLockedValue { $0 } == ["a mail": 1, "a push": 1])
    }
}
