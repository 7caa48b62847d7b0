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

    @Test func theArithmeticAgreesWithFoundationsCalendar() throws {
        for name in ["UTC", "Europe/Paris", "America/St_Johns", "Asia/Kathmandu", "Pacific/Chatham", "America/Los_Angeles"] {
            let zone = try #require(TimeZone(identifier: name))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            // Every 7,919 s (a prime: every minute of the hour comes round) from 1969 to 2031.
            var instant = Date(timeIntervalSince1970: -31_536_000)
            while instant.timeIntervalSince1970 < 1_956_528_000 {
                let parts = calendar.dateComponents([.year, .month, .day, .hour, .weekday], from: instant)
                let expected = String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
                let local = LocalHour(instant, in: zone)
                #expect(local.day == expected && local.hour == parts.hour! && local.weekday == (parts.weekday! + 5) % 7 + 1, "\(name) \(instant)")
                if local.day != expected || local.hour != parts.hour! { return }
                instant += 7_919
            }
        }
    }

    @Test func aJobAddressesTheTagsItSelectsBy() {
        #expect(Audience.tags(TagExpression(all: ["a", "b"], any: ["b", "c"], none: ["d"])).addressedTags == ["a", "b", "c"])
        #expect(Audience.broadcast.addressedTags.isEmpty)
        let job = try! JSONValue(parsing: Data(#"{"app":"a","audience":{"tags":{"any":["x","y"],"none":["z"]}},"notification":7}"#.utf8))
        #expect(Audience.receiptTargets(ofJob: job).tags == ["x", "y"], "read from the audience alone")
        #expect(Audience.receiptTargets(ofJob: ["audience": ["broadcast": true]]).tags.isEmpty)
        #expect(Audience.receiptTargets(ofJob: ["audience": 7]).tags.isEmpty)
        #expect(Audience.receiptTargets(ofJob: ["app": "a"]).tags.isEmpty)
    }

    @Test func aReceiptCountsIntoADevicesHoursWhenItsJobFoundTheDeviceInTheRegistry() {
        func targets(_ audience: JSONValue, pushType: String = "alert") -> Bool {
            Audience.receiptTargets(ofJob: ["audience": audience, "headers": ["push-type": .string(pushType)]]).registeredDevices
        }
        #expect(targets(["broadcast": true]))
        #expect(targets(["tags": ["any": ["x"]]]))
        #expect(targets(["openids": ["u1"]]))
        #expect(targets(["area": ["lat": 1, "lon": 2, "radius-km": 3]]))
        #expect(!targets(["tokens": [.string(String(repeating: "ab", count: 32))]]), "listed tokens may be unknown to the registry")
        #expect(!targets(["broadcast": true], pushType: "voip"), "VoIP tokens have a registry of their own")
        #expect(!targets(["broadcast": true], pushType: "liveactivity"))
        #expect(!Audience.receiptTargets(ofJob: ["audience": 7]).registeredDevices)
        #expect(Audience.receiptTargets(ofJob: ["audience": ["tags": ["all": ["a"]]]]) == (["a"], true))
    }
}
