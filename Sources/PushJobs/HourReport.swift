public import PushCore
public import PushStore

/// An app's hour-of-day statistics as the API (`GET /v1/apps/{app}/stats/hours`) and
/// `pushfleet stats hours` show them.
package struct HourReport: Sendable {
    package var app: String
    package var timeZone: String
    package var tag: String?
    package var days: Int
    package var grid: HourGrid

    /// The least sent in an hour for it to be named the best one.
    package static let bestHourMinimumSent = 100
    /// The days a report covers when not told.
    package static let defaultDays = 28

    package init(app: String, timeZone: String, tag: String?, days: Int, grid: HourGrid) {
        self.app = app
        self.timeZone = timeZone
        self.tag = tag
        self.days = days
        self.grid = grid
    }

    /// The best hour: the highest delivery rate among the hours with at least
    /// ``bestHourMinimumSent`` sent.
    package var best: HourGrid.Cell? { grid.bestHour(minimumSent: Self.bestHourMinimumSent) }

    /// The API's `HourStatistics`.
    package var json: JSONValue {
        [
            "app": .string(app), "time-zone": .string(timeZone), "days": .number(JSONNumber(days)),
            "tag": tag.map(JSONValue.string) ?? .null,
            "hours": .array(grid.cells.map(Self.json)),
            "best": best.map(Self.json) ?? .null,
        ]
    }

    private static func json(_ cell: HourGrid.Cell) -> JSONValue {
        func rate(_ value: Double?) -> JSONValue {
            value.flatMap { JSONNumber(($0 * 10_000).rounded() / 10_000) }.map(JSONValue.number) ?? .null
        }
        return [
            "weekday": .number(JSONNumber(cell.weekday)), "hour": .number(JSONNumber(cell.hour)),
            "sent": .number(JSONNumber(cell.sent)), "delivered": .number(JSONNumber(cell.delivered)),
            "opened": .number(JSONNumber(cell.opened)),
            "delivery-rate": rate(cell.deliveryRate), "open-rate": rate(cell.openRate),
        ]
    }

    static let weekdayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// For a terminal: the delivery rate in percent per weekday (rows) and hour (columns),
    /// `.` where nothing was sent, then the totals and the best hour.
    package var lines: [String] {
        func cell(_ text: String) -> String { String(repeating: " ", count: max(0, 4 - text.count)) + text }
        var lines = ["app \(app)" + (tag.map { ", tag \($0)" } ?? "") + ": delivery rate (%) by hour, last \(days) day(s), \(timeZone)"]
        lines.append("    " + (0..<24).map { cell(String($0)) }.joined())
        for weekday in 1...7 {
            let row = (0..<24).map { hour -> String in
                guard let rate = grid[weekday, hour].deliveryRate else { return cell(".") }
                return cell(String(Int((rate * 100).rounded())))
            }
            lines.append(Self.weekdayNames[weekday - 1] + " " + row.joined())
        }
        let sent = grid.cells.reduce(0) { $0 + $1.sent }
        let delivered = grid.cells.reduce(0) { $0 + $1.delivered }
        let opened = grid.cells.reduce(0) { $0 + $1.opened }
        lines.append("sent \(sent), delivered \(delivered), opened \(opened)")
        if let best {
            let rate = Int(((best.deliveryRate ?? 0) * 100).rounded())
            lines.append("best hour: \(Self.weekdayNames[best.weekday - 1]) \(best.hour):00–\(best.hour + 1):00 (\(rate)% of \(best.sent) delivered)")
        } else {
            lines.append("best hour: none yet (no hour has \(Self.bestHourMinimumSent) sent)")
        }
        return lines
    }
}
