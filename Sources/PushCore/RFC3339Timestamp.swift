import APNsCore
import Foundation

/// RFC 3339 `date-time` reading and writing, as JSON Schema's `date-time` format defines it:
/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, `T` and `Z` in either case, real calendar days,
/// no leap seconds (second 60 is rejected, as Python's jsonschema does).
public enum RFC3339Timestamp {
    /// The instant `text` denotes, or `nil` if it is not an RFC 3339 date-time.
    static func date(from text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0

        func number(_ width: Int) -> Int? {
            guard index + width <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + width] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += width
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }

        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            expect("Tt"), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
            let second = number(2)
        else { return nil }
        guard year >= 1, (1...12).contains(month), (1...daysInMonth(month, year: year)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }

        var fraction = 0.0
        if expect(".") {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                index += 1
            }
            guard index > start, let value = Double("0." + String(decoding: bytes[start..<index], as: UTF8.self))
            else { return nil }
            fraction = value
        }

        var offsetSeconds = 0
        if !expect("Zz") {
            guard index < bytes.count else { return nil }
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            guard expect("+-"), let offsetHour = number(2), expect(":"), let offsetMinute = number(2),
                offsetHour < 24, offsetMinute < 60
            else { return nil }
            offsetSeconds = sign * (offsetHour * 3600 + offsetMinute * 60)
        }
        guard index == bytes.count else { return nil }

        let days = CivilDays.since1970(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// `date` in UTC as `YYYY-MM-DDTHH:MM:SS[.fff]Z`, rounded to the millisecond, with the
    /// fraction only when it is not zero.
    public static func string(from date: Date) -> String {
        let milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded())
        let (dayOffset, dayMilliseconds) = floorDivision(milliseconds, by: 86_400_000)
        let secondOfDay = dayMilliseconds / 1000
        var text =
            fullDate(daysSince1970: dayOffset) + "T"
            + "\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if dayMilliseconds % 1000 != 0 {
            text += "." + pad(dayMilliseconds % 1000, 3)
        }
        return text + "Z"
    }

    /// RFC 3339's `full-date`, `YYYY-MM-DD`, of the day `days` after 1970-01-01.
    static func fullDate(daysSince1970 days: Int) -> String {
        let (year, month, day) = CivilDays.date(daysSince1970: days)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    /// `value` split into whole `divisor`s, rounded towards minus infinity, and the remainder
    /// (never negative): an instant before 1970 falls on the day before, not day 0.
    static func floorDivision(_ value: Int, by divisor: Int) -> (quotient: Int, remainder: Int) {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
