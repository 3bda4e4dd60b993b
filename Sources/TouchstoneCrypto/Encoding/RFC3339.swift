/// RFC 3339 timestamps in UTC with milliseconds (`2026-11-23T21:50:52.338Z`), written by arithmetic: the API's
/// times and webhook bodies are made on hot paths, where Foundation's formatters and calendars cost more than the
/// rest of the work.
public enum RFC3339 {
    /// The timestamp of a count of milliseconds since 1970-01-01T00:00:00Z (the proleptic Gregorian calendar).
    public static func string(millis: Int64) -> String {
        let days = Self.floorDivided(millis, 86_400_000)
        let msOfDay = millis - days * 86_400_000
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

    static func floorDivided(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    /// The proleptic Gregorian date of a count of days since 1970-01-01 (the civil-from-days computation of the
    /// 400-year cycle, as in C++20's `<chrono>`).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = Self.floorDivided(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
