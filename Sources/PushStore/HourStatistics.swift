import APNsCore
public import Foundation
public import PushCore
import Redis

/// What the hour-of-day statistics count: notifications that reached APNs (accepted or refused,
/// as a job counts `sent`), and the receipts devices post.
package enum HourEvent: String, Sendable, CaseIterable {
    case sent
    case delivered
    case opened

    /// The counted form of a receipt.
    package init(_ receipt: ReceiptEvent) {
        switch receipt {
        case .delivered: self = .delivered
        case .opened: self = .opened
        }
    }
}

/// An app's sends and receipts counted by the local day and hour they happened in, in the app's
/// time zone (`apps.<id>.time-zone`), for the app and for each tag a job addressed: the hours of
/// the week when the app's users read. One hash per app and local day,
/// `pf:{<app>}:hours:<YYYY-MM-DD>`, fields `<hour>:<event>` for the app and
/// `t:<tag>:<hour>:<event>` for a tag, kept ``retentionDays`` days.
package final class HourStatistics: Sendable {
    let client: any RedisCommands

    /// How long a day's counts are kept; the most a read may cover is ``maxDays``.
    package static let retentionDays = 92
    /// The most days one read adds up.
    package static let maxDays = 90

    package init(client: any RedisCommands) {
        self.client = client
    }

    /// Adds `count` `event`s at `date` to the app's counts and to those of each of `tags`: one
    /// script in the app's slot (`HourScripts.add`: an `HINCRBY` per target, a `PEXPIRE`).
    ///
    /// - Throws: ``StoreError`` naming `app`, `tags` or `count`; `RedisClientError`.
    package func add(_ count: Int, _ event: HourEvent, app: String, tags: [String] = [], at date: Date, in timeZone: TimeZone) async throws {
        guard let call = try Self.addCall(count, event, app: app, tags: tags, at: date, in: timeZone) else { return }
        _ = try await client.runScripts([call])
    }

    /// Counts a receipt as ``add(_:_:app:tags:at:in:)`` does one, and, when `device` is given,
    /// into that device's receipt hours too (``DeviceTime/receiptHours``, the UTC hour of
    /// `date`): both scripts in one pipeline. The caller gives `device` only for a device it
    /// found in the registry, so that nothing is kept for a token the registry does not have.
    ///
    /// - Throws: ``StoreError`` naming `app` or `tags`; `RedisClientError`.
    package func addReceipt(
        _ event: HourEvent, app: String, tags: [String] = [], at date: Date, in timeZone: TimeZone, device: DeviceToken?
    ) async throws {
        var calls = try Self.addCall(1, event, app: app, tags: tags, at: date, in: timeZone).map { [$0] } ?? []
        if let device {
            calls.append(DeviceTimeScripts.countHourCall(app: app, token: device, at: Int64((date.timeIntervalSince1970 * 1000).rounded(.down))))
        }
        _ = try await client.runScripts(calls)
    }

    /// The script call adding `count` `event`s at `date`; `nil` for a count of 0.
    static func addCall(
        _ count: Int, _ event: HourEvent, app: String, tags: [String], at date: Date, in timeZone: TimeZone
    ) throws(StoreError) -> RedisScriptCall? {
        try StoreValidation.app(app)
        try StoreValidation.tags(tags, field: "tags")
        guard count >= 0 else { throw StoreError(.invalidArgument, field: "count", message: "must not be negative, is \(count)") }
        guard count > 0 else { return nil }
        let local = LocalHour(date, in: timeZone)
        let fields = [Self.field(hour: local.hour, event: event)] + Set(tags).sorted().map { Self.field(tag: $0, hour: local.hour, event: event) }
        return RedisScriptCall(
            HourScripts.add, keys: [.string(Self.key(app: app, day: local.day))],
            arguments: [.integer(Self.retentionDays * 86_400_000), .integer(count)] + fields.map { .string($0) })
    }

    /// The app's counts (or the tag's) over the `days` local days ending with the day of `now`,
    /// added up by weekday and hour.
    ///
    /// - Throws: ``StoreError`` naming `app`, `tag` or `days`; `RedisClientError`.
    package func week(app: String, tag: String? = nil, days: Int, endingAt now: Date, in timeZone: TimeZone) async throws -> HourGrid {
        try StoreValidation.app(app)
        if let tag { try StoreValidation.tag(tag, field: "tag") }
        guard (1...Self.maxDays).contains(days) else {
            throw StoreError(.invalidArgument, field: "days", message: "must be 1 to \(Self.maxDays), is \(days)")
        }
        let calendarDays = LocalHour.days(endingAt: now, count: days, in: timeZone)
        var fields: [(hour: Int, event: HourEvent)] = []
        for hour in 0..<24 {
            for event in HourEvent.allCases { fields.append((hour, event)) }
        }
        let names: [RedisArgument] = fields.map { field in
            .string(tag.map { Self.field(tag: $0, hour: field.hour, event: field.event) } ?? Self.field(hour: field.hour, event: field.event))
        }
        let replies = try await client.checkedPipeline(calendarDays.map { ["HMGET", .string(Self.key(app: app, day: $0.day))] + names })
        var grid = HourGrid()
        for (day, reply) in zip(calendarDays, replies) {
            guard let values = reply.array, values.count == fields.count else {
                throw StoreError.unexpected(reply, from: "HMGET of app \(app)'s hours of \(day.day)")
            }
            for (field, value) in zip(fields, values) where !value.isNull {
                guard let count = value.int else { throw StoreError.unexpected(value, from: "HMGET of app \(app)'s hours of \(day.day)") }
                grid.add(Int(count), field.event, weekday: day.weekday, hour: field.hour)
            }
        }
        return grid
    }

    /// `pf:{<app>}:hours:<day>`
    static func key(app: String, day: String) -> String {
        "pf:{\(app)}:hours:\(day)"
    }

    /// `<hour>:<event>`
    static func field(hour: Int, event: HourEvent) -> String {
        "\(hour):\(event.rawValue)"
    }

    /// `t:<tag>:<hour>:<event>`
    static func field(tag: String, hour: Int, event: HourEvent) -> String {
        "t:\(tag):\(hour):\(event.rawValue)"
    }
}

/// Sends and receipts added up by ISO weekday (1 Monday … 7 Sunday) and hour (0–23), with the
/// rates derived from them and the best hour. Pure.
package struct HourGrid: Sendable, Equatable {
    /// One weekday's hour.
    package struct Cell: Sendable, Equatable {
        package var weekday: Int
        package var hour: Int
        package var sent = 0
        package var delivered = 0
        package var opened = 0

        /// Delivered receipts per notification sent; `nil` when nothing was sent.
        package var deliveryRate: Double? { sent > 0 ? Double(delivered) / Double(sent) : nil }
        /// Opened receipts per notification sent; `nil` when nothing was sent.
        package var openRate: Double? { sent > 0 ? Double(opened) / Double(sent) : nil }
    }

    /// The 168 hours of the week, Monday 0:00 first.
    package private(set) var cells: [Cell]

    package init() {
        cells = (1...7).flatMap { weekday in (0..<24).map { Cell(weekday: weekday, hour: $0) } }
    }

    /// The cell of `weekday` (1–7) and `hour` (0–23).
    package subscript(weekday: Int, hour: Int) -> Cell {
        cells[(weekday - 1) * 24 + hour]
    }

    mutating func add(_ count: Int, _ event: HourEvent, weekday: Int, hour: Int) {
        let index = (weekday - 1) * 24 + hour
        switch event {
        case .sent: cells[index].sent += count
        case .delivered: cells[index].delivered += count
        case .opened: cells[index].opened += count
        }
    }

    /// The hour with the highest delivery rate among those with at least `minimumSent`
    /// notifications sent (ties: the one with more sent, then the earlier); `nil` when none has.
    package func bestHour(minimumSent: Int) -> Cell? {
        var best: Cell?
        for cell in cells where cell.sent >= max(1, minimumSent) {
            guard let current = best, let currentRate = current.deliveryRate, let rate = cell.deliveryRate else {
                best = cell
                continue
            }
            if rate > currentRate || (rate == currentRate && cell.sent > current.sent) {
                best = cell
            }
        }
        return best
    }
}

enum HourScripts {
    /// Adds a count to fields of a day's hours and keeps the day ``HourStatistics/retentionDays``.
    ///
    /// KEYS: the day. ARGV: the retention in ms, the count, then the fields. Returns the count.
    static let add = RedisScript(
        """
        for i = 3, #ARGV do redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[2]) end
        redis.call('PEXPIRE', KEYS[1], ARGV[1])
        return tonumber(ARGV[2])
        """)
}
