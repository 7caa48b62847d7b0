import APNsCore
public import PushCore
import Redis

/// The key of one time bucket of an app: the time zones and receipt hours of the devices whose
/// token falls in registry bucket `bucket` (``ShardKeyspace/bucketIndex(of:)``), one hash in its
/// own slot `{tz:<app>:<bucket>}`. Like the locations, 1,024 buckets per app whatever its
/// registry layout: no key holds the whole audience, and a reshard moves none of them.
struct DeviceTimeKeyspace: Sendable {
    /// `pf:{tz:<app>:<bucket>}`: HASH, field `z<binary token>` → the device's time zone name,
    /// `h<binary token>` → its ``ReceiptHours`` (24 bytes).
    let key: String

    init(app: String, token: DeviceToken) {
        key = "pf:{tz:\(app):\(ShardKeyspace.bucketIndex(of: token))}"
    }

    static func zoneField(_ token: DeviceToken) -> [UInt8] { [UInt8(ascii: "z")] + token.markerBytes }
    static func hoursField(_ token: DeviceToken) -> [UInt8] { [UInt8(ascii: "h")] + token.markerBytes }
}

/// What the registry knows of a device's day: the time zone it was bound with and when it reads.
package struct DeviceTime: Hashable, Sendable {
    /// The IANA name the device was bound with; `nil` when it gave none (the app's zone applies).
    package var timeZone: String?
    /// Its receipts by UTC hour.
    package var receiptHours: ReceiptHours

    package init(timeZone: String?, receiptHours: ReceiptHours) {
        self.timeZone = timeZone
        self.receiptHours = receiptHours
    }

    /// The fields the API and the CLI add to a device: `time-zone` (`null` when none) and
    /// `receipt-hours`, `{"utc": [24 counts], "best-utc-hour": h or null}`.
    package var jsonFields: JSONObject {
        [
            "time-zone": timeZone.map(JSONValue.string) ?? .null,
            "receipt-hours": [
                "utc": .array(receiptHours.counts.map { .number(JSONNumber($0)) }),
                "best-utc-hour": receiptHours.bestHour.map { .number(JSONNumber($0)) } ?? .null,
            ],
        ]
    }
}

extension DeviceRecord {
    /// ``jsonValue`` with the device's `time-zone` and `receipt-hours` (``DeviceTime/jsonFields``):
    /// a device as the API and the CLI show it.
    package func jsonValue(with time: DeviceTime) -> JSONValue {
        guard case .object(var object) = jsonValue else { return jsonValue }
        for (key, value) in time.jsonFields { object[key] = value }
        return .object(object)
    }
}

/// Device time zones (given on bind) and receipt hours (counted as receipts arrive): what a
/// send at a device's local time or best hour reads. Both go with the device when it is unbound.
extension DeviceRegistry {
    /// Writes the time zones of the devices of a bind that named one: `HSET`s pipelined.
    func writeTimeZones(_ devices: [DeviceRegistration], app: String) async throws {
        let commands: [[RedisArgument]] = devices.compactMap { device in
            device.timeZone.map { zone in
                let keys = DeviceTimeKeyspace(app: app, token: device.token)
                return ["HSET", .string(keys.key), .bytes(DeviceTimeKeyspace.zoneField(device.token)), .string(zone)]
            }
        }
        _ = try await pipeline(commands)
    }

    /// The time zones of `tokens` (`nil` for a device that gave none), one `HMGET` per time
    /// bucket, pipelined.
    func timeZones(app: String, tokens: [DeviceToken]) async throws -> [String?] {
        var byBucket: [String: [Int]] = [:]
        for (index, token) in tokens.enumerated() {
            byBucket[DeviceTimeKeyspace(app: app, token: token).key, default: []].append(index)
        }
        let buckets = Array(byBucket)
        let replies = try await pipeline(
            buckets.map { key, indexes in
                ["HMGET", .string(key)] + indexes.map { .bytes(DeviceTimeKeyspace.zoneField(tokens[$0])) }
            })
        var zones = [String?](repeating: nil, count: tokens.count)
        for ((_, indexes), reply) in zip(buckets, replies) {
            guard let values = reply.array, values.count == indexes.count else {
                throw StoreError.unexpected(reply, from: "HMGET of device time zones")
            }
            for (index, value) in zip(indexes, values) { zones[index] = value.string }
        }
        return zones
    }

    /// Every device of `app` as `devices export` writes it and `devices import` reads it back: its
    /// record's JSON (``DeviceRecord/jsonValue``) with `time-zone` when it has one, a page at a
    /// time (``forEachDevice(app:_:)``). Receipt hours are not exported: they are counted again
    /// from the receipts that come.
    ///
    /// - Throws: ``StoreError`` naming `app`; what `body` throws; `RedisClientError`.
    package func forEachExportLine(app: String, _ body: ([JSONValue]) async throws -> Void) async throws {
        try await forEachDevice(app: app) { page in
            let zones = try await timeZones(app: app, tokens: page.map(\.token))
            try await body(
                zip(page, zones).map { record, zone in
                    guard let zone, case .object(var object) = record.jsonValue else { return record.jsonValue }
                    object["time-zone"] = .string(zone)
                    return .object(object)
                })
        }
    }

    /// A device's time zone and receipt hours (whether or not it is registered).
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func deviceTime(app: String, token: DeviceToken) async throws -> DeviceTime {
        try StoreValidation.app(app)
        let reply = try await pipeline([
            [
                "HMGET", .string(DeviceTimeKeyspace(app: app, token: token).key), .bytes(DeviceTimeKeyspace.zoneField(token)),
                .bytes(DeviceTimeKeyspace.hoursField(token)),
            ]
        ])[0]
        guard let values = reply.array, values.count == 2 else { throw StoreError.unexpected(reply, from: "HMGET of a device's time") }
        return DeviceTime(timeZone: values[0].string, receiptHours: ReceiptHours(bytes: values[1].bytes ?? []))
    }

    /// Forgets a device's time zone and receipt hours.
    func forgetTime(app: String, token: DeviceToken) async throws {
        _ = try await pipeline([
            [
                "HDEL", .string(DeviceTimeKeyspace(app: app, token: token).key), .bytes(DeviceTimeKeyspace.zoneField(token)),
                .bytes(DeviceTimeKeyspace.hoursField(token)),
            ]
        ])
    }
}

enum DeviceTimeScripts {
    /// The call counting a receipt at `at` (ms since 1970) into the device's hours: its UTC hour.
    static func countHourCall(app: String, token: DeviceToken, at: Int64) -> RedisScriptCall {
        RedisScriptCall(
            countHour, keys: [.string(DeviceTimeKeyspace(app: app, token: token).key)],
            arguments: [.bytes(DeviceTimeKeyspace.hoursField(token)), .integer(Int((at / 3_600_000) % 24))])
    }

    /// Adds one receipt to a device's hour, halving every hour first when it would pass 255.
    ///
    /// KEYS: the device's time bucket. ARGV: the hours field, the UTC hour (0–23). Returns the
    /// hour's new count.
    static let countHour = RedisScript(
        """
        local stored = redis.call('HGET', KEYS[1], ARGV[1])
        local counts = {}
        if stored and #stored == 24 then
          counts = {string.byte(stored, 1, 24)}
        else
          for h = 1, 24 do counts[h] = 0 end
        end
        local hour = tonumber(ARGV[2]) + 1
        if counts[hour] == 255 then
          for h = 1, 24 do counts[h] = math.floor(counts[h] / 2) end
        end
        counts[hour] = counts[hour] + 1
        redis.call('HSET', KEYS[1], ARGV[1], string.char(unpack(counts)))
        return counts[hour]
        """)
}
