import Foundation
import PushCore
import Redis
import Testing

@testable import PushStore

@Suite("Hour statistics")
struct HourStatisticsTests {
    static let utc = TimeZone(identifier: "UTC")!
    static let paris = TimeZone(identifier: "Europe/Paris")!
    /// Wednesday 2026-11-25 22:30 UTC: Wednesday 23:30 in Paris.
    static let wednesdayNight = Date(timeIntervalSince1970: 1_795_645_800)

    @Test func sendsAndReceiptsAddUpByWeekdayAndHourOfTheAppsTimeZone() async throws {
        try await withRedis { client async throws in
            let hours = HourStatistics(client: client)
            try await hours.add(1000, .sent, app: "news", tags: ["sports"], at: Self.wednesdayNight, in: Self.paris)
            try await hours.add(600, .delivered, app: "news", tags: ["sports", "sports"], at: Self.wednesdayNight, in: Self.paris)
            try await hours.add(50, .opened, app: "news", at: Self.wednesdayNight, in: Self.paris)
            // An hour later in Paris it is Thursday 0:00.
            try await hours.add(10, .sent, app: "news", at: Self.wednesdayNight.addingTimeInterval(3600), in: Self.paris)
            // A week earlier: the same cell, when the read covers it.
            try await hours.add(500, .sent, app: "news", at: Self.wednesdayNight.addingTimeInterval(-7 * 86_400), in: Self.paris)
            try await hours.add(7, .sent, app: "other", at: Self.wednesdayNight, in: Self.paris)

            let week = try await hours.week(app: "news", days: 7, endingAt: Self.wednesdayNight.addingTimeInterval(3600), in: Self.paris)
            #expect(week[3, 23] == HourGrid.Cell(weekday: 3, hour: 23, sent: 1000, delivered: 600, opened: 50))
            #expect(week[3, 23].deliveryRate == 0.6)
            #expect(week[3, 23].openRate == 0.05)
            #expect(week[4, 0].sent == 10)
            #expect(week.cells.reduce(0) { $0 + $1.sent } == 1010)
            let twoWeeks = try await hours.week(app: "news", days: 8, endingAt: Self.wednesdayNight, in: Self.paris)
            #expect(twoWeeks[3, 23].sent == 1500, "8 days back from a Wednesday reach the Wednesday before")

            let sports = try await hours.week(app: "news", tag: "sports", days: 1, endingAt: Self.wednesdayNight, in: Self.paris)
            #expect(sports[3, 23] == HourGrid.Cell(weekday: 3, hour: 23, sent: 1000, delivered: 600, opened: 0))
            // Read in UTC, the same counts sit where they were written: the day key is Paris's.
            let inUTC = try await hours.week(app: "news", days: 1, endingAt: Self.wednesdayNight, in: Self.utc)
            #expect(inUTC[3, 23].sent == 1000)

            let key = HourStatistics.key(app: "news", day: "2026-11-25")
            let ttl = try await client.pttl(key)
            #expect(ttl > 91 * 86_400_000 && ttl <= 92 * 86_400_000)
        }
    }

    @Test func theBestHourHasTheHighestDeliveryRateAmongHoursSentEnough() {
        var grid = HourGrid()
        grid.add(1000, .sent, weekday: 1, hour: 9)
        grid.add(500, .delivered, weekday: 1, hour: 9)
        grid.add(200, .sent, weekday: 2, hour: 20)
        grid.add(180, .delivered, weekday: 2, hour: 20)
        grid.add(10, .sent, weekday: 3, hour: 3)
        grid.add(10, .delivered, weekday: 3, hour: 3)
        #expect(grid.bestHour(minimumSent: 100).map { [$0.weekday, $0.hour] } == [2, 20])
        #expect(grid.bestHour(minimumSent: 1).map { [$0.weekday, $0.hour] } == [3, 3])
        #expect(grid.bestHour(minimumSent: 2000) == nil)
        #expect(HourGrid()[7, 23].deliveryRate == nil)
    }

    @Test func invalidArgumentsNameTheirField() async throws {
        try await withRedis { client async throws in
            let hours = HourStatistics(client: client)
            let now = Date()
            #expect(await registryError { try await hours.add(1, .sent, app: "a:b", at: now, in: Self.utc) }?.field == "app")
            #expect(await registryError { try await hours.add(-1, .sent, app: "a", at: now, in: Self.utc) }?.field == "count")
            #expect(
                await registryError { try await hours.add(1, .sent, app: "a", tags: [""], at: now, in: Self.utc) }?.field?.hasPrefix("tags") == true)
            #expect(await registryError { try await hours.week(app: "a", days: 0, endingAt: now, in: Self.utc) }?.field == "days")
            #expect(await registryError { try await hours.week(app: "a", days: 91, endingAt: now, in: Self.utc) }?.field == "days")
            try await hours.add(0, .sent, app: "a", at: now, in: Self.utc)
            #expect(try await client.keyCount() == 0)
        }
    }
}
