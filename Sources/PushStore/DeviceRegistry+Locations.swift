import APNsCore
import PushCore
import Redis

/// The keys of one location bucket of an app: the reported locations of the devices whose
/// token falls in registry bucket `bucket` (``ShardKeyspace/bucketIndex(of:)``), in their own
/// hash slot `{loc:<app>:<bucket>}`, one key per day of report. An app's locations spread over
/// 1,024 buckets whatever its registry layout, so no key holds its whole audience and a reshard
/// moves none of them; the bucket, a number, is last in the tag, so no two (app, bucket) pairs
/// share a key.
struct LocationKeyspace: Sendable {
    /// Location buckets of an app: the registry's buckets per shard.
    static let bucketCount = ShardKeyspace.bucketCount
    /// The tasks an area job fans out to, each reading every 16th location bucket.
    static let taskCount = 16
    static let dayMilliseconds: Int64 = 86_400_000

    /// `pf:{loc:<app>:<bucket>}:`
    let base: String

    init(app: String, bucket: Int) {
        base = "pf:{loc:\(app):\(bucket)}:"
    }

    init(app: String, token: DeviceToken) {
        self.init(app: app, bucket: ShardKeyspace.bucketIndex(of: token))
    }

    /// GEO (a sorted set): binary token → the coarsened location of the devices whose last report
    /// came on `day` (days since 1970, UTC). It expires when its locations do.
    func points(day: Int64) -> String { base + String(day) }

    /// The days a location may have been reported on at `now` (milliseconds since 1970) when
    /// locations are kept `days` days after the day of their report: `today - days` to today.
    static func days(now: Int64, days: Int) -> ClosedRange<Int64> {
        let today = now / dayMilliseconds
        return today - Int64(days)...today
    }

    /// The keys of ``days(now:days:)``, today's last.
    func window(now: Int64, days: Int) -> [RedisArgument] {
        Self.days(now: now, days: days).map { .string(points(day: $0)) }
    }

    /// When a location reported at `now` expires: at the start of the day `days + 1` days after.
    static func expiry(reportedAt now: Int64, days: Int) -> Int64 {
        (now / dayMilliseconds + Int64(days) + 1) * dayMilliseconds
    }

    /// The location buckets area task `task` reads: every bucket `b` with `b ≡ task.shard (mod
    /// task.count)`.
    static func buckets(of task: ShardTask) -> StrideTo<Int> {
        stride(from: task.shard, to: bucketCount, by: task.count)
    }
}

/// Where a device last said it was: its location coarsened to the registry's precision, and
/// when it is forgotten.
package struct DeviceLocation: Hashable, Sendable {
    /// The stored point, coarsened.
    package var point: GeoPoint
    /// When the location expires, milliseconds since 1970.
    package var expiresAt: Int64

    package init(point: GeoPoint, expiresAt: Int64) {
        self.point = point
        self.expiresAt = expiresAt
    }

    /// `{"token", "lat", "lon", "expires-at"}`: the API's and the CLI's answer.
    package func jsonValue(token: DeviceToken) -> JSONValue {
        var object: JSONObject = ["token": .string(token.hex)]
        for (key, value) in point.jsonObject { object[key] = value }
        object["expires-at"] = .number(JSONNumber(Int(expiresAt)))
        return .object(object)
    }
}

/// Coarse device locations, for the campaigns whose audience is an area: a device (its app)
/// reports where it is, the registry keeps that to ``DeviceRegistryConfiguration/locationPrecisionKilometres``
/// until ``DeviceRegistryConfiguration/locationDays`` days after the day of the report, and an
/// area job's expansion reads the devices within its circle with Redis's `GEOSEARCH`, bucket by
/// bucket. A location lives in the key of the day of its report, which expires with it, so no
/// per-device expiry is stored and nothing has to sweep.
extension DeviceRegistry {
    /// The tasks an area job fans out to (``scanArea(app:task:environment:filter:area:cursor:count:)``).
    package static let areaTaskCount = LocationKeyspace.taskCount

    /// Records where a registered device is: `point` coarsened, expiring after the registry's
    /// location TTL (a report again restarts it).
    ///
    /// - Returns: what is stored.
    /// - Throws: ``StoreError`` — `deviceNotRegistered`, or naming `app`, `lat` or `lon`;
    ///   `RedisClientError`.
    @discardableResult
    package func setLocation(app: String, token: DeviceToken, _ point: GeoPoint) async throws -> DeviceLocation {
        try StoreValidation.app(app)
        if let problem = GeoPoint.check(latitude: point.latitude, longitude: point.longitude) {
            throw StoreError(.invalidArgument, field: problem.field, message: problem.message)
        }
        guard try await records(app: app, tokens: [token])[0] != nil else { throw Self.notRegistered(token, app: app) }
        let now = clock()
        let days = configuration.locationDays
        let stored = DeviceLocation(
            point: point.coarsened(toKilometres: configuration.locationPrecisionKilometres),
            expiresAt: LocationKeyspace.expiry(reportedAt: now, days: days))
        _ = try await run([
            RedisScriptCall(
                LocationScripts.set, keys: LocationKeyspace(app: app, token: token).window(now: now, days: days),
                arguments: [
                    .string(String(stored.point.longitude)), .string(String(stored.point.latitude)), .bytes(token.markerBytes),
                    .integer(Int(stored.expiresAt - now)),
                ])
        ])
        return stored
    }

    /// Forgets where a device is (whether or not it is registered).
    ///
    /// - Returns: whether a location was stored.
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    @discardableResult
    package func forgetLocation(app: String, token: DeviceToken) async throws -> Bool {
        try StoreValidation.app(app)
        let keys = LocationKeyspace(app: app, token: token).window(now: clock(), days: configuration.locationDays)
        let reply = try await run([RedisScriptCall(LocationScripts.forget, keys: keys, arguments: [.bytes(token.markerBytes)])])[0]
        guard let removed = reply.int else { throw StoreError.unexpected(reply, from: "the forget-location script") }
        return removed > 0
    }

    /// Where a device is, as stored; `nil` when it reported no location or it expired.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func location(app: String, token: DeviceToken) async throws -> DeviceLocation? {
        try StoreValidation.app(app)
        let keys = LocationKeyspace(app: app, token: token)
        // Newest day first: a device is in one day's key, but read the newest should a report and
        // a forget have crossed.
        let days = Array(LocationKeyspace.days(now: clock(), days: configuration.locationDays).reversed())
        let replies = try await pipeline(days.map { ["GEOPOS", .string(keys.points(day: $0)), .bytes(token.markerBytes)] })
        for (day, reply) in zip(days, replies) {
            guard let position = reply.array?.first?.array, position.count == 2,
                let longitude = position[0].string.flatMap(Double.init), let latitude = position[1].string.flatMap(Double.init)
            else { continue }
            // Redis keeps a point to about 0.6 m: snapped again, it reads as it was stored.
            let point = GeoPoint(latitude: latitude, longitude: longitude).coarsened(toKilometres: configuration.locationPrecisionKilometres)
            return DeviceLocation(
                point: point, expiresAt: LocationKeyspace.expiry(reportedAt: day * LocationKeyspace.dayMilliseconds, days: configuration.locationDays)
            )
        }
        return nil
    }

    /// One page of area task `task` (of ``LocationKeyspace/taskCount``): the devices of
    /// `environment` matching `filter` whose location (not expired) is in `area`, from the next
    /// location buckets of the task, with their ids.
    ///
    /// Start with cursor 0 and follow ``ShardScanPage/cursor`` until ``ShardScanPage/isComplete``.
    /// A page reads whole location buckets (8, doubling to 64 while they hold few matches) until
    /// it holds about `count` devices; a location of a device no longer registered is skipped.
    ///
    /// - Throws: ``StoreError`` naming `app`, `shard` (a task count that does not divide the
    ///   buckets), `count`, `cursor` or the tag expression; `RedisClientError`.
    package func scanArea(
        app: String, task: ShardTask, environment: APNsEnvironment, filter: ScanFilter = .devices, area: GeoArea, cursor: UInt64,
        count: Int
    ) async throws -> ShardScanPage {
        try StoreValidation.app(app)
        let buckets = Array(try Self.locationBuckets(of: task))
        try ShardScanPage.check(cursor: cursor, count: count, units: buckets.count)
        guard let matcher = try await matcher(app: app, environment: environment, filter: filter) else {
            return ShardScanPage(cursor: 0, tokens: [], ids: [])
        }
        return try await ShardScanPage.fill(from: Int(cursor), of: buckets.count, count: count, largestGroup: 64) { range in
            let located = try await devicesIn(area, app: app, buckets: buckets[range])
            let records = try await withLayout(app: app) { layout in try await locate(app: app, tokens: located, layout: layout) }
            return zip(located, records).compactMap { token, record in
                record.bytes.flatMap(matcher.id(ofMatching:)).map { (token, $0) }
            }
        }
    }

    /// How many devices (of either environment, registered or not) have a location in `area`
    /// that has not expired: every location bucket searched, pipelined. An upper bound of what
    /// an area job reaches.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func locatedDevices(app: String, in area: GeoArea) async throws -> Int {
        try StoreValidation.app(app)
        let replies = try await run(searchCalls(area, app: app, buckets: 0..<LocationKeyspace.bucketCount, counting: true))
        return try replies.reduce(0) { total, reply in
            guard let count = reply.int else { throw StoreError.unexpected(reply, from: "the area search script") }
            return total + Int(count)
        }
    }

    /// The location buckets of area task `task`.
    ///
    /// - Throws: ``StoreError`` (`invalidArgument`, field `shard`) when the task count does
    ///   not divide the buckets or the task is not below it.
    package static func locationBuckets(of task: ShardTask) throws(StoreError) -> StrideTo<Int> {
        guard task.count > 0, LocationKeyspace.bucketCount % task.count == 0, (0..<task.count).contains(task.shard) else {
            throw StoreError(
                .invalidArgument, field: "shard",
                message: "an area task must be one of a count dividing \(LocationKeyspace.bucketCount), is \(task)")
        }
        return LocationKeyspace.buckets(of: task)
    }

    /// The tokens located in `area` in `buckets`, one script call per bucket, pipelined.
    private func devicesIn(_ area: GeoArea, app: String, buckets: some Collection<Int>) async throws -> [DeviceToken] {
        var tokens: [DeviceToken] = []
        for reply in try await run(searchCalls(area, app: app, buckets: buckets, counting: false)) {
            guard let members = reply.array else { throw StoreError.unexpected(reply, from: "the area search script") }
            for member in members {
                guard let bytes = member.bytes, let token = DeviceToken(markerBytes: bytes) else {
                    throw StoreError.unexpected(reply, from: "the area search script")
                }
                tokens.append(token)
            }
        }
        return tokens
    }

    private func searchCalls(_ area: GeoArea, app: String, buckets: some Sequence<Int>, counting: Bool) -> [RedisScriptCall] {
        let arguments: [RedisArgument] = [
            .string(String(area.center.longitude)), .string(String(area.center.latitude)), .string(String(area.radiusKilometres)),
            counting ? "1" : "0",
        ]
        let now = clock()
        return buckets.map { bucket in
            RedisScriptCall(
                LocationScripts.search, keys: LocationKeyspace(app: app, bucket: bucket).window(now: now, days: configuration.locationDays),
                arguments: arguments)
        }
    }
}

enum LocationScripts {
    /// Stores a device's location in the key of the day, and takes it out of the earlier days'.
    ///
    /// KEYS: the bucket's keys of the window, today's last. ARGV: longitude, latitude, binary
    /// token, milliseconds until today's key expires.
    static let set = RedisScript(
        """
        for k = 1, #KEYS - 1 do redis.call('ZREM', KEYS[k], ARGV[3]) end
        redis.call('GEOADD', KEYS[#KEYS], ARGV[1], ARGV[2], ARGV[3])
        redis.call('PEXPIRE', KEYS[#KEYS], ARGV[4])
        return 1
        """)

    /// Forgets a device's location. KEYS: the bucket's keys of the window. ARGV: binary token.
    /// Returns how many keys held it (1 when it had a location).
    static let forget = RedisScript(
        """
        local removed = 0
        for k = 1, #KEYS do removed = removed + redis.call('ZREM', KEYS[k], ARGV[1]) end
        return removed
        """)

    /// The tokens of a bucket located within the radius (or, when counting, how many).
    ///
    /// KEYS: the bucket's keys of the window. ARGV: longitude, latitude, radius km, `1` to count.
    static let search = RedisScript(
        """
        local found = {}
        for k = 1, #KEYS do
          local members = redis.call('GEOSEARCH', KEYS[k], 'FROMLONLAT', ARGV[1], ARGV[2], 'BYRADIUS', ARGV[3], 'km')
          for m = 1, #members do found[#found + 1] = members[m] end
        end
        if ARGV[4] == '1' then return #found end
        return found
        """)
}
