import Foundation
import PushCore
import Testing

@testable import PushJobs
@testable import PushStore

@Suite("When each device of a job sent at its own time is due")
struct DeviceSendPlanTests {
    static let hour: Int64 = 3_600_000
    /// 2030-01-07T10:20:00Z, a Monday.
    static let from: Int64 = 1_894_011_600_000

    func hours(_ counts: [Int: UInt8]) -> ReceiptHours {
        var bytes = [UInt8](repeating: 0, count: 24)
        for (hour, count) in counts { bytes[hour] = count }
        return ReceiptHours(bytes: bytes)
    }

    @Test func localTimeIsTheNextTimeTheDevicesClockReadsIt() {
        let utc = TimeZone(identifier: "UTC")!
        var plan = DeviceSendPlan(rule: .localTime(hour: 9, minute: 0), from: Self.from, appTimeZone: utc, fallback: Self.from)
        let base = Self.from / (24 * Self.hour) * (24 * Self.hour)
        // UTC 10:20 now: 09:00 UTC is tomorrow; Tokyo's 09:00 is 00:00 UTC tomorrow; New York's
        // (winter, UTC-5) is 14:00 UTC today; Kolkata's (UTC+5:30) 03:30 UTC tomorrow.
        #expect(plan.instant(timeZone: nil, hours: hours([:])) == base + 33 * Self.hour)
        #expect(plan.instant(timeZone: "Asia/Tokyo", hours: hours([:])) == base + 24 * Self.hour)
        #expect(plan.instant(timeZone: "America/New_York", hours: hours([:])) == base + 14 * Self.hour)
        #expect(plan.instant(timeZone: "Asia/Kolkata", hours: hours([:])) == base + 27 * Self.hour + Self.hour / 2)
        // A slot is the instant's quarter of an hour; now's quarter goes out at once.
        #expect(plan.slot(of: base + 14 * Self.hour) == base + 14 * Self.hour)
        #expect(plan.slot(of: base + 14 * Self.hour + 60_000) == base + 14 * Self.hour)
        #expect(plan.slot(of: Self.from + 60_000) == nil)
    }

    @Test func aDeviceWithAHistoryGoesAtItsMostReadHourOfTheWindow() {
        let utc = TimeZone(identifier: "UTC")!
        var plan = DeviceSendPlan(rule: .bestHour(withinHours: 24), from: Self.from, appTimeZone: utc, fallback: 42)
        let current = Self.from / Self.hour * Self.hour
        // Reads most at 15 UTC: today at 15:00.
        #expect(plan.instant(timeZone: nil, hours: hours([15: 5, 8: 2])) == current + 5 * Self.hour)
        // At 08 UTC: tomorrow at 08:00.
        #expect(plan.instant(timeZone: nil, hours: hours([8: 5, 15: 2])) == current + 22 * Self.hour)
        // At 10 UTC, the hour under way: now.
        #expect(plan.instant(timeZone: nil, hours: hours([10: 3])) == Self.from)
        // Equal hours: the earlier instant.
        #expect(plan.instant(timeZone: nil, hours: hours([9: 2, 12: 2])) == current + 2 * Self.hour)
        // Fewer than 3 receipts: the fallback.
        #expect(plan.instant(timeZone: nil, hours: hours([15: 2])) == 42)
        // A window of 3 hours holds 10, 11 and 12 UTC: 15 is out of it, so the best inside it.
        var short = DeviceSendPlan(rule: .bestHour(withinHours: 3), from: Self.from, appTimeZone: utc, fallback: 42)
        #expect(short.instant(timeZone: nil, hours: hours([15: 9, 12: 1, 11: 2])) == current + Self.hour)
        #expect(short.instant(timeZone: nil, hours: hours([15: 9])) == 42, "nothing read inside the window")
    }

    @Test func withoutAHistoryTheBestRatedHourOfTheTagThenTheApp() {
        let utc = TimeZone(identifier: "UTC")!
        var app = HourGrid()
        var tag = HourGrid()
        // Monday 2030-01-07: the app reads best at 18:00, the tag at 13:00 (but too little sent).
        app.add(200, .sent, weekday: 1, hour: 18)
        app.add(150, .delivered, weekday: 1, hour: 18)
        app.add(200, .sent, weekday: 1, hour: 12)
        app.add(50, .delivered, weekday: 1, hour: 12)
        tag.add(50, .sent, weekday: 1, hour: 13)
        tag.add(50, .delivered, weekday: 1, hour: 13)
        let current = Self.from / Self.hour * Self.hour
        #expect(DeviceSendPlan.fallbackInstant(from: Self.from, withinHours: 24, grids: [tag, app], timeZone: utc) == current + 8 * Self.hour)
        tag.add(100, .sent, weekday: 1, hour: 13)
        tag.add(100, .delivered, weekday: 1, hour: 13)
        #expect(DeviceSendPlan.fallbackInstant(from: Self.from, withinHours: 24, grids: [tag, app], timeZone: utc) == current + 3 * Self.hour)
        #expect(DeviceSendPlan.fallbackInstant(from: Self.from, withinHours: 24, grids: [HourGrid()], timeZone: utc) == Self.from)
    }
}
