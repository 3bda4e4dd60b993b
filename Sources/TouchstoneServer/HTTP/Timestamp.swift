public import Foundation
import TouchstoneStore

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    fileprivate func floorModulo(_ divisor: Int64) -> Int64 { self - self.floorDivided(by: divisor) * divisor }
}

extension Date {
    /// RFC 3339 in UTC with milliseconds, as every time in the API is written (`2026-11-23T21:50:52.338Z`).
    ///
    /// Written from ``millis``, the value the store keeps, so a time and its stored copy always read alike: rounded to
    /// the nearest millisecond, as stored, not truncated (Foundation's ISO 8601 style truncates, and a time stored as
    /// `.338` was answered as `.337` when it was created; issue #29, item 2).
    public var rfc3339: String {
        let millis = self.millis
        let (days, msOfDay) = (millis.floorDivided(by: 86_400_000), millis.floorModulo(86_400_000))
        let (year, month, day) = Self.civil(fromDays: days)
        var text = ""
        text.reserveCapacity(24)
        func append(_ value: Int64, width: Int) {
            let digits = String(value)
            if digits.count < width { text += String(repeating: "0", count: width - digits.count) }
            text += digits
        }
        append(year, width: 4)
        text += "-"
        append(month, width: 2)
        text += "-"
        append(day, width: 2)
        text += "T"
        append(msOfDay / 3_600_000, width: 2)
        text += ":"
        append(msOfDay / 60_000 % 60, width: 2)
        text += ":"
        append(msOfDay / 1000 % 60, width: 2)
        text += "."
        append(msOfDay % 1000, width: 3)
        text += "Z"
        return text
    }

    /// The proleptic Gregorian date of a count of days since 1970-01-01 (the civil-from-days computation of the
    /// 400-year cycle, as in C++20's `<chrono>`).
    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
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
