import Foundation
import Testing
import TouchstoneCrypto
import TouchstoneTesting

/// RFC 3339 `date-time` (§5.6): written to the millisecond, and read by its grammar exactly.
struct RFC3339Tests {
    @Test func writingAndReadingAgree() {
        var generator = SplitMix(state: 3339)
        // Year 0000 to 9999, both ends included.
        let first = RFC3339.millis(parsing: "0000-01-01T00:00:00Z")!
        let last = RFC3339.millis(parsing: "9999-12-31T23:59:59.999Z")!
        #expect(RFC3339.string(millis: first) == "0000-01-01T00:00:00.000Z")
        #expect(RFC3339.string(millis: last) == "9999-12-31T23:59:59.999Z")
        for _ in 0..<5_000 {
            let millis = Int64.random(in: first...last, using: &generator)
            #expect(RFC3339.millis(parsing: RFC3339.string(millis: millis)) == millis)
        }
    }

    @Test func offsetsFractionsAndCaseFollowTheGrammar() {
        #expect(RFC3339.millis(parsing: "1970-01-01T00:00:00Z") == 0)
        #expect(RFC3339.millis(parsing: "2026-11-23T21:50:52.338Z") == 1_795_470_652_338)
        #expect(RFC3339.millis(parsing: "2026-11-24T03:20:52.338+05:30") == 1_795_470_652_338)
        #expect(RFC3339.millis(parsing: "2026-11-23t21:50:52.338z") == 1_795_470_652_338)
        // Offsets up to 23:59, as the grammar allows (Foundation's parser refused past 18 hours).
        #expect(RFC3339.millis(parsing: "0494-05-28T10:25:34-19:14") == RFC3339.millis(parsing: "0494-05-29T05:39:34Z"))
        #expect(RFC3339.millis(parsing: "2026-11-23T23:59:00+23:59") == RFC3339.millis(parsing: "2026-11-23T00:00:00Z"))
        // Fractions of any length, read to the millisecond.
        #expect(RFC3339.millis(parsing: "1970-01-01T00:00:00.1Z") == 100)
        #expect(RFC3339.millis(parsing: "1970-01-01T00:00:00.99999999Z") == 999)
        #expect(RFC3339.millis(parsing: "1969-12-31T23:59:59.5Z") == -500)
        // A leap second is the next minute's first.
        #expect(RFC3339.millis(parsing: "2016-12-31T23:59:60Z") == RFC3339.millis(parsing: "2017-01-01T00:00:00Z"))
        // Leap years.
        #expect(RFC3339.millis(parsing: "2024-02-29T00:00:00Z") != nil)
        #expect(RFC3339.millis(parsing: "2000-02-29T00:00:00Z") != nil)
        // The same instants as Foundation reads them, where it reads them.
        for text in ["2026-11-23T21:50:52Z", "1999-12-31T23:59:59+01:00", "2038-01-19T03:14:08-07:00", "1970-01-01T00:00:00+18:00"] {
            let foundation = try? Date(text, strategy: Date.ISO8601FormatStyle())
            #expect(RFC3339.millis(parsing: text) == foundation.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }, "\(text)")
        }
    }

    @Test(arguments: [
        "2026-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z",
        "2026-11-00T00:00:00Z", "2026-11-23T24:00:00Z", "2026-11-23T21:60:00Z", "2026-11-23T21:50:61Z", "2026-11-23T21:50:52",
        "2026-11-23T21:50:52.Z", "2026-11-23T21:50:52+5:30", "2026-11-23T21:50:52+05:60", "2026-11-23T21:50:52+24:00",
        "2026-11-23 21:50:52Z", "2026-11-23T21:50:52Zx", "+2026-11-23T21:50:52Z", "26-11-23T21:50:52Z", "2026-11-23",
        "2026-11-23T21:50Z", "２０２６-11-23T21:50:52Z", "", "2026-11-23T21:50:52+0530",
    ])
    func anythingElseIsRefused(text: String) {
        #expect(RFC3339.millis(parsing: text) == nil)
    }
}
