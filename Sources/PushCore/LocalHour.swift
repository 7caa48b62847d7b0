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
    /// instant, then the proleptic Gregorian calendar in integer arithmetic (as RFC 3339 dates; a
    /// receipt's hot path: no `Calendar`).
    public init(_ date: Date, in timeZone: TimeZone) {
        let local = Int((date.timeIntervalSince1970).rounded(.down)) + timeZone.secondsFromGMT(for: date)
        let (days, seconds) = RFC3339Timestamp.floorDivision(local, by: 86_400)
        // 1970-01-01 was a Thursday (ISO 4).
        let weekday = RFC3339Timestamp.floorDivision(days + 3, by: 7).remainder + 1
        self.init(day: RFC3339Timestamp.fullDate(daysSince1970: days), weekday: weekday, hour: seconds / 3_600)
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
}
