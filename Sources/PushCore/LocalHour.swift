public import Foundation

/// Where an instant falls in a time zone: its local calendar day, weekday and hour. The
/// hour-of-day statistics count sends and receipts into these (`docs/api.md`, "Hours").
public struct LocalHour: Hashable, Sendable {
    /// The local calendar day, `YYYY-MM-DD`.
    public var day: String
    /// The ISO 8601 weekday of ``day``: 1 Monday … 7 Sunday.
    public var weekday: Int
    /// The local hour, 0–23.
    public var hour: Int

    public init(day: String, weekday: Int, hour: Int) {
        self.day = day
        self.weekday = weekday
        self.hour = hour
    }

    /// The local day, weekday and hour of `date` in `timeZone`.
    public init(_ date: Date, in timeZone: TimeZone) {
        let parts = Self.calendar(timeZone).dateComponents([.year, .month, .day, .hour, .weekday], from: date)
        self.init(
            day: Self.dayName(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1),
            weekday: Self.isoWeekday(gregorian: parts.weekday ?? 1), hour: parts.hour ?? 0)
    }

    /// The `count` local days ending with the day of `date` in `timeZone`, newest first, each with
    /// its ISO weekday. Steps by calendar days, so a day of 23 or 25 hours (a daylight saving
    /// change) is neither skipped nor counted twice.
    public static func days(endingAt date: Date, count: Int, in timeZone: TimeZone) -> [(day: String, weekday: Int)] {
        let calendar = calendar(timeZone)
        let noon = calendar.date(bySettingHour: 12, minute: 0, second: 0, of: date) ?? date
        return (0..<max(0, count)).compactMap { back in
            guard let earlier = calendar.date(byAdding: .day, value: -back, to: noon) else { return nil }
            let local = LocalHour(earlier, in: timeZone)
            return (local.day, local.weekday)
        }
    }

    private static func calendar(_ timeZone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    /// Foundation's weekday (1 Sunday … 7 Saturday) as ISO 8601's (1 Monday … 7 Sunday).
    static func isoWeekday(gregorian: Int) -> Int {
        (gregorian + 5) % 7 + 1
    }

    private static func dayName(year: Int, month: Int, day: Int) -> String {
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))"
    }
}
