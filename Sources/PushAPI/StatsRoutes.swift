import Foundation
import Hummingbird
import PushConfiguration
import PushCore
import PushJobs
import PushStore

/// `GET /v1/apps/{app}/stats/hours`: when the app's notifications are read, by weekday and hour
/// of the app's time zone (``HourStatistics``).
enum StatsRoutes {
    static let routes: [APIRoute] = [
        APIRoute(.get, "/v1/apps/{app}/stats/hours", "getHourStatistics", hours)
    ]

    /// `GET …/stats/hours?tag=T&days=N`: for each weekday (1 Monday … 7 Sunday) and hour of the
    /// last `days` days (1–90, default 28) in the app's time zone, the notifications sent, the
    /// `delivered` and `opened` receipts and their rates to sent; with `tag`, those of the jobs
    /// that addressed the tag. `best` is the hour with the highest delivery rate among those
    /// with at least 100 sent (null when none has).
    static func hours(_ call: inout APICall) async throws -> Response {
        let app = call.app
        let days = try call.wholeNumber("days", default: HourReport.defaultDays, in: 1...HourStatistics.maxDays)
        let tag = try call.query("tag").map { try APIValidation.text($0, field: "tag", what: "a tag") }
        let now = Date(timeIntervalSince1970: Double(call.api.clock()) / 1000)
        let grid = try await call.api.hours.week(app: app.id, tag: tag, days: days, endingAt: now, in: app.statisticsTimeZone)
        return APIResponse.json(HourReport(app: app.id, timeZone: app.timeZone, tag: tag, days: days, grid: grid).json)
    }
}
