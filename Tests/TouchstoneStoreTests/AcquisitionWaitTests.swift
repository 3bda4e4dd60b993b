import Testing

@testable import TouchstoneStore

/// The PostgreSQL executor's wait for a pooled connection: a timeout of the time the process could run, not of the
/// wall clock (a process whose threads were all busy for seconds must not fail every waiting call at once).
struct AcquisitionWaitTests {
    @Test func expiresAfterTheTimeoutWhenSlicesEndOnTime() {
        var wait = AcquisitionWait(timeout: .seconds(5))
        #expect(wait.slice == .milliseconds(250))
        var slices = 0
        while !wait.record(sleptFor: .milliseconds(251)) { slices += 1 }
        // 20 slices of 250 ms (each a little late, as sleeps are) make 5 s.
        #expect(slices + 1 == 20)
    }

    @Test func aLateSliceCountsAsTwoSlicesNotAsItsLength() {
        var wait = AcquisitionWait(timeout: .seconds(5))
        // Six seconds in which nothing in the process could run: not a timeout by itself.
        let expired = wait.record(sleptFor: .seconds(6))
        #expect(!expired)
        #expect(wait.waited == .milliseconds(500))
        var slices = 0
        while !wait.record(sleptFor: .milliseconds(250)) { slices += 1 }
        #expect(slices + 1 == 18)
    }

    @Test(arguments: [
        (Duration.milliseconds(1), Duration.milliseconds(1)),
        (.milliseconds(100), .milliseconds(10)),
        (.seconds(1), .milliseconds(50)),
        (.seconds(60), .milliseconds(250)),
    ])
    func slicesAreATwentiethOfTheTimeoutWithinBounds(timeout: Duration, slice: Duration) {
        #expect(AcquisitionWait(timeout: timeout).slice == slice)
    }

    @Test func aTimeoutShorterThanASliceExpiresAfterOne() {
        var wait = AcquisitionWait(timeout: .milliseconds(5))
        let expired = wait.record(sleptFor: .milliseconds(5))
        #expect(expired)
    }
}
