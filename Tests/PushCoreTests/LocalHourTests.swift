import Foundation
import Testing

@testable import PushCore

@Suite("Local hour")
struct LocalHourTests {
    /// 2026-03-08T06:30:00Z, a Sunday; 01:30 in New York (EST, before the clocks go forward at 02:00).
    static let sundayMorning = Date(timeIntervalSince1970: 1_772_951_400)

    @Test func anInstantFallsIntoItsLocalDayWeekdayAndHour() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        #expect(LocalHour(Self.sundayMorning, in: utc) == LocalHour(day: "2026-03-08", weekday: 7, hour: 6))
        let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        #expect(LocalHour(Self.sundayMorning, in: tokyo) == LocalHour(day: "2026-03-08", weekday: 7, hour: 15))
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        #expect(LocalHour(Self.sundayMorning, in: newYork) == LocalHour(day: "2026-03-08", weekday: 7, hour: 1))
        // An hour later the clocks have gone forward: 03:30 EDT, not 02:30.
        #expect(LocalHour(Self.sundayMorning.addingTimeInterval(3600), in: newYork).hour == 3)
        // Monday is 1: the next day in Tokyo.
        #expect(LocalHour(Self.sundayMorning.addingTimeInterval(12 * 3600), in: tokyo) == LocalHour(day: "2026-03-09", weekday: 1, hour: 3))
    }

    @Test func daysStepByTheCalendarAcrossADaylightSavingChange() throws {
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        // 23:30 local on Monday 2026-03-09, after the 23-hour Sunday.
        let mondayNight = Date(timeIntervalSince1970: 1_773_113_400)
        #expect(LocalHour(mondayNight, in: newYork).day == "2026-03-09")
        let days = LocalHour.days(endingAt: mondayNight, count: 4, in: newYork)
        #expect(days.map(\.day) == ["2026-03-09", "2026-03-08", "2026-03-07", "2026-03-06"])
        #expect(days.map(\.weekday) == [1, 7, 6, 5])
        #expect(LocalHour.days(endingAt: mondayNight, count: 0, in: newYork).isEmpty)
    }

    @Test func isoWeekdaysStartOnMonday() {
        #expect((1...7).map(LocalHour.isoWeekday(gregorian:)) == [7, 1, 2, 3, 4, 5, 6])
    }

    @Test func aJobAddressesTheTagsItSelectsBy() {
        #expect(Audience.tags(TagExpression(all: ["a", "b"], any: ["b", "c"], none: ["d"])).addressedTags == ["a", "b", "c"])
        #expect(Audience.broadcast.addressedTags.isEmpty)
    }
}
