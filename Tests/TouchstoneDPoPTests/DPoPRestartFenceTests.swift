import Foundation
import Testing
import TouchstoneDPoP

/// The fence of a restart (``DPoPRestartFence``): a proof the process before could have accepted needs this process's
/// nonce until it is stale; nothing else does.
struct DPoPRestartFenceTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func fence(_ bytes: UInt8 = 7) -> DPoPRestartFence {
        DPoPRestartFence(startedAt: self.start, allowedSkew: 5, maximumAge: 60) { Array(repeating: bytes, count: $0) }
    }

    @Test func proofsIssuedUpToTheStartAndTheSkewNeedTheNonce() {
        let fence = self.fence()
        let now = self.start.addingTimeInterval(1)
        for offset in [-60.0, -1, 0, 4, 5] {
            #expect(fence.demandsNonce(issuedAt: self.start.addingTimeInterval(offset), nonce: nil, at: now), "iat start\(offset)")
            #expect(fence.demandsNonce(issuedAt: self.start.addingTimeInterval(offset), nonce: "other", at: now))
            #expect(!fence.demandsNonce(issuedAt: self.start.addingTimeInterval(offset), nonce: fence.nonce, at: now))
        }
        // A proof issued after that was never seen by the process before.
        #expect(!fence.demandsNonce(issuedAt: self.start.addingTimeInterval(5.001), nonce: nil, at: now))
        #expect(!fence.demandsNonce(issuedAt: self.start.addingTimeInterval(6), nonce: nil, at: now))
    }

    @Test func theFenceEndsWhenWhatItGuardsIsStale() {
        let fence = self.fence()
        let last = self.start.addingTimeInterval(5 + 60)
        #expect(fence.isActive(at: last) && fence.accepts(fence.nonce, at: last))
        #expect(fence.demandsNonce(issuedAt: self.start, nonce: nil, at: last))
        let after = last.addingTimeInterval(0.001)
        #expect(!fence.isActive(at: after) && !fence.accepts(fence.nonce, at: after))
        #expect(!fence.demandsNonce(issuedAt: self.start, nonce: nil, at: after))
    }

    @Test func aMarkRecordedBeforeTheRestartExtendsTheFenceWhenTheClockWentBack() {
        // The process before recorded that it accepted proofs up to start + 90 s; this one starts with a clock set back.
        let mark = self.start.addingTimeInterval(90)
        let fence = DPoPRestartFence(startedAt: self.start, earlierIssuedUntil: mark, allowedSkew: 5, maximumAge: 60) {
            Array(repeating: 3, count: $0)
        }
        #expect(fence.latestEarlierIssue == mark)
        let now = self.start.addingTimeInterval(88)
        #expect(fence.demandsNonce(issuedAt: mark, nonce: nil, at: now))
        #expect(!fence.demandsNonce(issuedAt: mark, nonce: fence.nonce, at: now))
        #expect(!fence.demandsNonce(issuedAt: mark.addingTimeInterval(0.001), nonce: nil, at: now))
        #expect(fence.isActive(at: mark.addingTimeInterval(60)) && !fence.isActive(at: mark.addingTimeInterval(60.001)))
        // A mark older than the start and the skew changes nothing.
        let older = DPoPRestartFence(startedAt: self.start, earlierIssuedUntil: self.start, allowedSkew: 5, maximumAge: 60) {
            Array(repeating: 3, count: $0)
        }
        #expect(older.latestEarlierIssue == self.start.addingTimeInterval(5))
    }

    @Test func eachProcessHasItsOwnNonce() {
        let one = self.fence(1), two = self.fence(2)
        #expect(one.nonce != two.nonce && one.nonce.count == 22)
        #expect(!one.accepts(two.nonce, at: self.start) && one.accepts(one.nonce, at: self.start))
        #expect(one.demandsNonce(issuedAt: self.start, nonce: two.nonce, at: self.start))
    }
}
