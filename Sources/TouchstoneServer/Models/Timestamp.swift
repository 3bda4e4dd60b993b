import Foundation

extension Date {
    /// RFC 3339 in UTC with milliseconds, as every time in the API is written.
    var rfc3339: String {
        self.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
    }
}
