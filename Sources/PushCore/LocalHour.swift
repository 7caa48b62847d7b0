import APNsCore
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

    /// The local day, weekday and hour of `date` in `timeZone`: the zone's offset at that
    /// instant, then the proleptic Gregorian calendar in integer arithmetic (``CivilDays``; a
    /// receipt's hot path: no `Calendar`).
    public init(_ date: Date, in timeZone: TimeZone) {
        let local = Int((date.timeIntervalSince1970).rounded(.down)) + timeZone.secondsFromGMT(for: date)
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let seconds = local - days * 86_400
        let (year, month, day) = CivilDays.date(daysSince1970: days)
        // 1970-01-01 was a Thursday (ISO 4).
        let weekday = ((days % 7 + 7) % 7 + 3) % 7 + 1
        self.init(day: Self.dayName(year: year, month: month, day: day), weekday: weekday, hour: seconds / 3_600)
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

    private static func dayName(year: Int, month: Int, day: Int) -> String {
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))"
    }
}
