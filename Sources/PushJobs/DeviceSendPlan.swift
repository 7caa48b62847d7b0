import APNsCore
public import Foundation
public import PushCore
public import PushStore

/// When each device's notification of a job sent at the devices' own times (``DeviceSendTime``)
/// is due, from the moment its expansion began (`from`, milliseconds since 1970, kept in the
/// job's statistics so that every task and every expansion again plans alike):
///
/// - local time: the next time the clock reads `HH:MM` in the device's zone (the app's for a
///   device that gave none), `from` itself when it reads that now. A time a daylight saving
///   change skips is the next one that exists;
/// - best hour: the start of the hour of the window (`from` to `from` + `within`) whose UTC hour
///   the device read most receipts in (``ReceiptHours``; the earliest of equal ones, `from` for
///   the hour under way); for a device with fewer than ``ReceiptHours/minimumReceipts``, or none
///   in the window, ``fallback``: the hour of the window with the best delivery rate of the job's
///   tag, else of the app (``fallbackInstant(from:withinHours:grids:timeZone:)``).
///
/// Notifications due after `from`'s quarter of an hour wait in the slot of their quarter
/// (``slot(of:)``); the others go out at once.
package struct DeviceSendPlan: Sendable {
    /// A slot of parked chunks: a quarter of an hour, as every time zone's offset is a multiple of one.
    package static let slotMilliseconds: Int64 = 900_000
    static let hourMilliseconds: Int64 = 3_600_000

    package let rule: DeviceSendTime
    package let from: Int64
    let appTimeZone: TimeZone
    /// The best-hour instant of a device without enough history of its own.
    package let fallback: Int64
    private var instantsByZone: [String: Int64] = [:]

    package init(rule: DeviceSendTime, from: Int64, appTimeZone: TimeZone, fallback: Int64) {
        self.rule = rule
        self.from = from
        self.appTimeZone = appTimeZone
        self.fallback = fallback
    }

    /// Whether the plan reads the devices' receipt hours (best hour), not only their zones.
    package var needsHours: Bool {
        if case .bestHour = rule { return true }
        return false
    }

    /// When the notification of a device with `timeZone` (an IANA name; `nil`: the app's) and
    /// `hours` is due, milliseconds since 1970.
    package mutating func instant(timeZone: String?, hours: ReceiptHours) -> Int64 {
        switch rule {
        case .localTime(let hour, let minute):
            let name = timeZone ?? appTimeZone.identifier
            if let known = instantsByZone[name] { return known }
            let zone = timeZone.flatMap(TimeZoneName.timeZone) ?? appTimeZone
            let instant = Self.nextLocalTime(hour: hour, minute: minute, from: from, in: zone)
            instantsByZone[name] = instant
            return instant
        case .bestHour(let within):
            guard hours.total >= ReceiptHours.minimumReceipts else { return fallback }
            var best: (count: Int, instant: Int64)?
            for (start, instant) in Self.windowHours(from: from, withinHours: min(within, 24)) {
                let count = hours.counts[Int((start / Self.hourMilliseconds) % 24)]
                if count > 0, count > best?.count ?? 0 { best = (count, instant) }
            }
            return best?.instant ?? fallback
        }
    }

    /// The slot (its start, ms) a notification due at `instant` waits in; `nil` when it is due
    /// within the quarter of an hour under way at `from`, or earlier: it goes out now.
    package func slot(of instant: Int64) -> Int64? {
        let slot = instant / Self.slotMilliseconds * Self.slotMilliseconds
        return slot > from / Self.slotMilliseconds * Self.slotMilliseconds ? slot : nil
    }

    /// The hours of a window from `from`: each hour's start (UTC, ms) and when a notification of
    /// it goes out (`from` for the hour under way).
    static func windowHours(from: Int64, withinHours: Int) -> [(start: Int64, instant: Int64)] {
        let current = from / hourMilliseconds * hourMilliseconds
        return (0..<withinHours).map { index in
            let start = current + Int64(index) * hourMilliseconds
            return (start, max(start, from))
        }
    }

    /// The next time at or after `from` that the clock of `zone` reads `hour:minute`.
    static func nextLocalTime(hour: Int, minute: Int, from: Int64, in zone: TimeZone) -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let start = Date(timeIntervalSince1970: Double(from - 1) / 1000)
        guard
            let date = calendar.nextDate(
                after: start, matching: DateComponents(hour: hour, minute: minute, second: 0), matchingPolicy: .nextTime)
        else { return from }
        return max(from, Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }

    /// The best-hour instant of devices without a history of their own: the hour of the window
    /// whose weekday and hour (in `timeZone`, the app's) had the best delivery rate in the first
    /// of `grids` (the job's tags', then the app's) that has an hour with at least
    /// ``HourReport/bestHourMinimumSent`` sent; `from` when none has.
    package static func fallbackInstant(from: Int64, withinHours: Int, grids: [HourGrid], timeZone: TimeZone) -> Int64 {
        let hours = windowHours(from: from, withinHours: withinHours)
        for grid in grids {
            var best: (rate: Double, instant: Int64)?
            for (_, instant) in hours {
                let local = LocalHour(Date(timeIntervalSince1970: Double(instant) / 1000), in: timeZone)
                let cell = grid[local.weekday, local.hour]
                guard cell.sent >= HourReport.bestHourMinimumSent, let rate = cell.deliveryRate else { continue }
                if rate > best?.rate ?? -1 { best = (rate, instant) }
            }
            if let best { return best.instant }
        }
        return from
    }
}
