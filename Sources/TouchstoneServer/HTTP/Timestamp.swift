public import Foundation
import TouchstoneCrypto
import TouchstoneStore

extension Date {
    /// RFC 3339 in UTC with milliseconds, as every time in the API is written (`2026-11-23T21:50:52.338Z`).
    ///
    /// Written from ``millis``, the value the store keeps, so a time and its stored copy always read alike: rounded to
    /// the nearest millisecond, as stored, not truncated (Foundation's ISO 8601 style truncates, and a time stored as
    /// `.338` was answered as `.337` when it was created; issue #29, item 2).
    public var rfc3339: String { RFC3339.string(millis: self.millis) }

    /// RFC 3339 in UTC to the second (`2026-11-23T21:50:52Z`), as a confirmation payload writes `expiresAt`.
    public var rfc3339Seconds: String {
        self.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false, timeZone: .gmt))
    }

    /// Parses RFC 3339, with or without fractional seconds (query parameters, CLI options).
    public init?(rfc3339 text: String) {
        guard let millis = RFC3339.millis(parsing: text) else { return nil }
        self = Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
    }
}
