public import Foundation

extension Date {
    /// RFC 3339 in UTC with milliseconds, as every time in the API is written.
    public var rfc3339: String {
        self.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }

    /// RFC 3339 in UTC to the second (`2026-11-23T21:50:52Z`), as a confirmation payload writes `expiresAt`.
    public var rfc3339Seconds: String {
        self.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false, timeZone: .gmt))
    }

    /// Parses RFC 3339, with or without fractional seconds (query parameters, CLI options).
    public init?(rfc3339 text: String) {
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            self = date
        } else if let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) {
            self = date
        } else {
            return nil
        }
    }
}
