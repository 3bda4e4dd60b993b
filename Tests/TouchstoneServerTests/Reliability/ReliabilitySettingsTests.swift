import Foundation
import Testing
@testable import TouchstoneServer

/// The settings of issue #44: how long SIGTERM waits for work in flight, and how long a mail sender holds its mails.
struct ReliabilitySettingsTests {
    @Test func shutdownGraceAndMailLeaseAreReadAndBounded() throws {
        let defaults = try TouchstoneConfiguration(environment: [:])
        #expect(defaults.shutdownGrace == .seconds(10))
        #expect(defaults.mail.lease == 180)
        let set = try TouchstoneConfiguration(environment: ["TOUCHSTONE_SHUTDOWN_GRACE_SECONDS": "30", "TOUCHSTONE_MAIL_LEASE_SECONDS": "15"])
        #expect(set.shutdownGrace == .seconds(30))
        #expect(set.mail.lease == 15)
        for (name, value) in [
            ("TOUCHSTONE_SHUTDOWN_GRACE_SECONDS", "0"), ("TOUCHSTONE_SHUTDOWN_GRACE_SECONDS", "301"), ("TOUCHSTONE_SHUTDOWN_GRACE_SECONDS", "ten"),
            ("TOUCHSTONE_MAIL_LEASE_SECONDS", "9"), ("TOUCHSTONE_MAIL_LEASE_SECONDS", "3601"), ("TOUCHSTONE_MAIL_LEASE_SECONDS", "-1"),
        ] {
            #expect(throws: ConfigurationError.self, "\(name)=\(value)") { try TouchstoneConfiguration(environment: [name: value]) }
        }
    }
}
