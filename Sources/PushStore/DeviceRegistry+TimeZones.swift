import APNsCore
public import PushCore
import Redis

/// The keys of one time bucket of an app: the time zones and the receipt hours of the devices
/// whose token falls in registry bucket `bucket` (``ShardKeyspace/bucketIndex(of:)``), each a
/// hash in a slot of its own. Like the locations, 1,024 buckets per app whatever its registry
/// layout: no key holds the whole audience, and a reshard moves none of them. Two hashes, not
/// one: a walk asks for the zones of a page's devices only where a bucket has any (`EXISTS`
/// first), and devices with receipts but no zone leave that key absent.
struct DeviceTimeKeyspace: Sendable {
    /// `pf:{tz:<app>:<bucket>}`: HASH, binary token → the device's time zone name.
    let zones: String
    /// `pf:{rh:<app>:<bucket>}`: HASH, binary token → its ``ReceiptHours`` (24 bytes).
    let hours: String

    init(app: String, token: DeviceToken) {
        self.init(app: app, bucket: ShardKeyspace.bucketIndex(of: token))
    }

    init(app: String, bucket: Int) {
        zones = "pf:{tz:\(app):\(bucket)}"
        hours = "pf:{rh:\(app):\(bucket)}"
    }
}

/// The time buckets of an app that hold anything (``DeviceRegistry/heldTimeBuckets(app:)``).
package struct HeldTimeBuckets: Sendable {
    /// Indexes of the buckets holding zones.
    let zones: Set<Int>
    /// Indexes of the buckets holding receipt hours.
    let hours: Set<Int>
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
        jsonValue(adding: time.jsonFields)
    }

    /// ``jsonValue`` with `fields` added to it.
    func jsonValue(adding fields: JSONObject) -> JSONValue {
        guard case .object(var object) = jsonValue else { return jsonValue }
        for (key, value) in fields { object[key] = value }
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
                ["HSET", .string(DeviceTimeKeyspace(app: app, token: device.token).zones), .bytes(device.token.markerBytes), .string(zone)]
            }
        }
        _ = try await pipeline(commands)
    }

    /// The time zones of `tokens` (`nil` for a device that gave none), reading only the buckets
    /// in `held` (those that hold zones): one `HMGET` per such bucket, pipelined.
    func timeZones(app: String, tokens: [DeviceToken], held: Set<Int>) async throws -> [String?] {
        let zones = try await fields(of: tokens, in: [({ DeviceTimeKeyspace(app: app, bucket: $0).zones }, held)])[0]
        return zones.map { $0.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// The time zones and receipt hours of `tokens`, as a send at each device's own time reads
    /// them a page at a time, from the buckets in `held` only (``heldTimeBuckets(app:)``); the
    /// hours only when `hours`. One pipeline.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func deviceTimes(app: String, tokens: [DeviceToken], hours: Bool, held: HeldTimeBuckets) async throws -> [DeviceTime] {
        try StoreValidation.app(app)
        var hashes: [(key: (Int) -> String, held: Set<Int>)] = [({ DeviceTimeKeyspace(app: app, bucket: $0).zones }, held.zones)]
        if hours { hashes.append(({ DeviceTimeKeyspace(app: app, bucket: $0).hours }, held.hours)) }
        let values = try await fields(of: tokens, in: hashes)
        return tokens.indices.map { index in
            DeviceTime(
                timeZone: values[0][index].map { String(decoding: $0, as: UTF8.self) },
                receiptHours: ReceiptHours(bytes: hours ? values[1][index] ?? [] : []))
        }
    }

    /// For each of `hashes` (a bucket's key by its index, and the buckets that hold any), each
    /// token's field in its bucket: one `HMGET` per held bucket the tokens fall in, all in one
    /// pipeline (none when no token's bucket is held).
    private func fields(of tokens: [DeviceToken], in hashes: [(key: (Int) -> String, held: Set<Int>)]) async throws -> [[[UInt8]?]] {
        let markers = tokens.map(\.markerBytes)
        var byBucket: [Int: [Int]] = [:]
        for (index, marker) in markers.enumerated() {
            byBucket[ShardKeyspace.bucketIndex(ofBytes: marker), default: []].append(index)
        }
        var commands: [[RedisArgument]] = []
        var targets: [(hash: Int, indexes: [Int])] = []
        for (number, hash) in hashes.enumerated() {
            for (bucket, indexes) in byBucket where hash.held.contains(bucket) {
                commands.append(["HMGET", .string(hash.key(bucket))] + indexes.map { .bytes(markers[$0]) })
                targets.append((number, indexes))
            }
        }
        let replies = try await pipeline(commands)
        var values = [[[UInt8]?]](repeating: [[UInt8]?](repeating: nil, count: tokens.count), count: hashes.count)
        for (target, reply) in zip(targets, replies) {
            guard let found = reply.array, found.count == target.indexes.count else {
                throw StoreError.unexpected(reply, from: "HMGET of device times")
            }
            for (index, value) in zip(target.indexes, found) { values[target.hash][index] = value.bytes }
        }
        return values
    }

    /// The indexes of `app`'s time buckets that hold zones: `EXISTS` of all 1,024, pipelined.
    func bucketsHoldingZones(app: String) async throws -> Set<Int> {
        try await existing { DeviceTimeKeyspace(app: app, bucket: $0).zones }
    }

    /// Which of `app`'s time buckets hold zones and which hold receipt hours (`EXISTS` of all
    /// 2,048, pipelined): read once by a walk that then asks only those.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func heldTimeBuckets(app: String) async throws -> HeldTimeBuckets {
        try StoreValidation.app(app)
        return HeldTimeBuckets(
            zones: try await existing { DeviceTimeKeyspace(app: app, bucket: $0).zones },
            hours: try await existing { DeviceTimeKeyspace(app: app, bucket: $0).hours })
    }

    /// The indexes of the buckets whose key (`key`) exists.
    private func existing(_ key: (Int) -> String) async throws -> Set<Int> {
        let replies = try await pipeline((0..<ShardKeyspace.bucketCount).map { ["EXISTS", .string(key($0))] })
        return Set(replies.indices.filter { replies[$0].int == 1 })
    }

    /// Every device of `app` as `devices export` writes it and `devices import` reads it back: its
    /// record's JSON (``DeviceRecord/jsonValue``) with `time-zone` when it has one, a page at a
    /// time (``forEachDevice(app:_:)``). Which buckets hold zones is read once, before the walk
    /// (a zone given during the walk, like a device bound during it, may or may not be in the
    /// export), so an app whose devices gave none costs one pipeline. Receipt hours are not
    /// exported: they are counted again from the receipts that come.
    ///
    /// - Throws: ``StoreError`` naming `app`; what `body` throws; `RedisClientError`.
    package func forEachExportLine(app: String, _ body: ([JSONValue]) async throws -> Void) async throws {
        try StoreValidation.app(app)
        let held = try await bucketsHoldingZones(app: app)
        try await forEachDevice(app: app) { page in
            // Without a bucket to read, no command is sent.
            let zones = try await timeZones(app: app, tokens: page.map(\.token), held: held)
            try await body(
                zip(page, zones).map { record, zone in
                    zone.map { record.jsonValue(adding: ["time-zone": .string($0)]) } ?? record.jsonValue
                })
        }
    }

    /// A device's time zone and receipt hours (whether or not it is registered).
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func deviceTime(app: String, token: DeviceToken) async throws -> DeviceTime {
        try StoreValidation.app(app)
        let keys = DeviceTimeKeyspace(app: app, token: token)
        let replies = try await pipeline([
            ["HGET", .string(keys.zones), .bytes(token.markerBytes)], ["HGET", .string(keys.hours), .bytes(token.markerBytes)],
        ])
        return DeviceTime(timeZone: replies[0].string, receiptHours: ReceiptHours(bytes: replies[1].bytes ?? []))
    }

    /// Forgets a device's time zone and receipt hours.
    func forgetTime(app: String, token: DeviceToken) async throws {
        let keys = DeviceTimeKeyspace(app: app, token: token)
        _ = try await pipeline([["HDEL", .string(keys.zones), .bytes(token.markerBytes)], ["HDEL", .string(keys.hours), .bytes(token.markerBytes)]])
    }
}

enum DeviceTimeScripts {
    /// The call counting a receipt at `at` (ms since 1970) into the device's hours: its UTC hour.
    static func countHourCall(app: String, token: DeviceToken, at: Int64) -> RedisScriptCall {
        RedisScriptCall(
            countHour, keys: [.string(DeviceTimeKeyspace(app: app, token: token).hours)],
            arguments: [.bytes(token.markerBytes), .integer(Int((at / 3_600_000) % 24))])
    }

    /// Adds one receipt to a device's hour, halving every hour first when it would pass 255.
    ///
    /// KEYS: the bucket's hours. ARGV: the binary token, the UTC hour (0–23). Returns the
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
