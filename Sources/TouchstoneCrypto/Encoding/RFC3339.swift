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

    /// The milliseconds since 1970-01-01T00:00:00Z of an RFC 3339 `date-time` (§5.6), exactly its grammar: `T` or `t`,
    /// seconds with any fraction (read to the millisecond, truncated), `Z`, `z` or an offset of up to 23:59 (the grammar
    /// allows that much; Foundation's parser refused offsets past 18 hours), a leap second `60` read as the next
    /// minute's first. Nil for anything else: a day the month does not have, a missing part, trailing text.
    public static func millis(parsing text: String) -> Int64? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ width: Int) -> Int64? {
            guard index + width <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<(index + width)] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            index += width
            return value
        }
        func expect(_ options: String) -> UInt8? {
            guard index < bytes.count, options.utf8.contains(bytes[index]) else { return nil }
            index += 1
            return bytes[index - 1]
        }
        guard let year = number(4), expect("-") != nil, let month = number(2), expect("-") != nil, let day = number(2),
            expect("Tt") != nil, let hour = number(2), expect(":") != nil, let minute = number(2), expect(":") != nil,
            let second = number(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= Self.days(inMonth: month, year: year), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var fraction: Int64 = 0
        if expect(".") != nil {
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                if index - start < 3 { fraction = fraction * 10 + Int64(bytes[index] - 0x30) }
                index += 1
            }
            guard index > start else { return nil }
            for _ in 0..<max(0, 3 - (index - start)) { fraction *= 10 }
        }
        guard let sign = expect("Zz+-") else { return nil }
        var offsetMinutes: Int64 = 0
        if sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            guard let offsetHour = number(2), expect(":") != nil, let offsetMinute = number(2), offsetHour <= 23, offsetMinute <= 59
            else { return nil }
            offsetMinutes = (offsetHour * 60 + offsetMinute) * (sign == UInt8(ascii: "-") ? -1 : 1)
        }
        guard index == bytes.count else { return nil }
        let days = Self.days(fromYear: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
        return seconds * 1000 + fraction
    }

    static func days(inMonth month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// The count of days since 1970-01-01 of a proleptic Gregorian date (the inverse of ``civil(fromDays:)``).
    static func days(fromYear year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = Self.floorDivided(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
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
