import Foundation
import Synchronization
import Testing

@testable import TouchstoneServer

/// ``DPoPIssueMark``: the bound on accepted proofs' `iat` a server with its replay record in memory writes before it
/// accepts a proof past it.
struct DPoPIssueMarkTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// The writes a mark made, and how many were in flight at once.
    final class Writes: Sendable {
        let state = Mutex<(values: [Date], inFlight: Int, mostInFlight: Int, failNext: Bool)>(([], 0, 0, false))

        func save(_ mark: Date) async throws {
            let fail = self.state.withLock { state in
                if state.failNext {
                    state.failNext = false
                    return true
                }
                state.inFlight += 1
                state.mostInFlight = max(state.mostInFlight, state.inFlight)
                return false
            }
            if fail { throw CancellationError() }
            for _ in 0..<3 { await Task.yield() }
            self.state.withLock { state in
                state.values.append(mark)
                state.inFlight -= 1
            }
        }
    }

    @Test func aProofPastTheMarkWaitsForANewOneAndOneBelowItDoesNot() async throws {
        let writes = Writes()
        let mark = DPoPIssueMark(written: Self.start, margin: 30) { try await writes.save($0) }
        try await mark.cover(Self.start.addingTimeInterval(-10))
        try await mark.cover(Self.start)
        #expect(writes.state.withLock { $0.values }.isEmpty)
        try await mark.cover(Self.start.addingTimeInterval(1))
        #expect(writes.state.withLock { $0.values } == [Self.start.addingTimeInterval(31)])
        #expect(mark.mark == Self.start.addingTimeInterval(31))
        try await mark.cover(Self.start.addingTimeInterval(31))
        #expect(writes.state.withLock { $0.values }.count == 1)
    }

    @Test func concurrentProofsWriteOneMarkAtATimeAndTheMarksNeverGoBack() async throws {
        let writes = Writes()
        let mark = DPoPIssueMark(written: nil, margin: 30) { try await writes.save($0) }
        // Proofs issued over ten minutes, in a shuffled order, all at once.
        let offsets = (0..<200).map { Double($0 * 3) }.shuffled()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for offset in offsets { group.addTask { try await mark.cover(Self.start.addingTimeInterval(offset)) } }
            try await group.waitForAll()
        }
        let state = writes.state.withLock { $0 }
        #expect(state.mostInFlight == 1)
        #expect(state.values == state.values.sorted() && Set(state.values).count == state.values.count)
        #expect(state.values.last == mark.mark)
        #expect(mark.mark.map { $0 >= Self.start.addingTimeInterval(offsets.max()!) } == true)
    }

    @Test func aMarkThatCannotBeWrittenRefusesTheProofAndTheNextOneTriesAgain() async throws {
        let writes = Writes()
        writes.state.withLock { $0.failNext = true }
        let mark = DPoPIssueMark(written: nil, margin: 30) { try await writes.save($0) }
        await #expect(throws: CancellationError.self) { try await mark.cover(Self.start) }
        #expect(mark.mark == nil)
        try await mark.cover(Self.start)
        #expect(mark.mark == Self.start.addingTimeInterval(30))
        #expect(writes.state.withLock { $0.inFlight } == 0)
    }
}
