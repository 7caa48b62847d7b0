import APNsCore
import PushCore
import Redis

/// What the expand stage reads: shard task scans for broadcasts and tag jobs, openid resolution.
/// Each is bounded by the caller's `count` or list, never by the size of the app.
extension DeviceRegistry {
    /// One page of shard task `task`: the devices of `environment` matching `filter` in the
    /// next buckets of the task's shards, with their ids.
    ///
    /// Start with cursor 0 and follow ``ShardScanPage/cursor`` until
    /// ``ShardScanPage/isComplete``. A page reads whole buckets (8, doubling to 128 while they
    /// hold few matches) until it holds about `count` devices. While a reshard runs, the task's
    /// shards devices move out of are read before the ones they move into, so a device moving
    /// meanwhile is seen once.
    ///
    /// - Throws: ``StoreError`` naming `app`, `shard` (a task that does not fit the
    ///   layout), `count`, `cursor`, or the tag expression (`filter.all[i]`, …);
    ///   `RedisClientError`.
    package func scanShard(
        app: String,
        task: ShardTask,
        environment: APNsEnvironment,
        filter: ScanFilter = .devices,
        cursor: UInt64,
        count: Int
    ) async throws -> ShardScanPage {
        try StoreValidation.app(app)
        try ShardScanPage.check(cursor: cursor, count: count, units: ShardKeyspace.bucketCount)
        _ = try await layout(app: app).shardsOfTask(task.shard, of: task.count)
        guard let matcher = try await matcher(app: app, environment: environment, filter: filter) else {
            return ShardScanPage(cursor: 0, tokens: [], ids: [])
        }
        return try await ShardScanPage.fill(from: Int(cursor), of: ShardKeyspace.bucketCount, count: count, largestGroup: 128) { range in
            let devices = try await withLayout(app: app) { layout in
                try await readBuckets(app: app, task: task, range: range, layout: layout)
            }
            return devices.compactMap { token, record in matcher.id(ofMatching: record).map { (token, $0) } }
        }
    }

    /// A page of shard `shard` of the app's current task count
    /// (``scanShard(app:task:environment:filter:cursor:count:)``).
    package func scanShard(
        app: String, shard: Int, environment: APNsEnvironment, filter: ScanFilter = .devices, cursor: UInt64, count: Int
    ) async throws -> ShardScanPage {
        try StoreValidation.app(app)
        let tasks = try await layout(app: app).taskCount
        return try await scanShard(
            app: app, task: ShardTask(shard: shard, of: tasks), environment: environment, filter: filter, cursor: cursor, count: count)
    }

    /// Resolves openids to the device each last logged in on, keeping only devices registered in
    /// `environment` and not kept aside as suspect, with their ids. Duplicate openids count once.
    ///
    /// Work and memory are proportional to `openIDs` (resolved 1,000 per pipeline); the expand
    /// stage passes a job's openids, which the job schema bounds.
    ///
    /// - Throws: ``StoreError`` naming `app` or `openIDs[i]`; `RedisClientError`.
    package func resolveOpenIDs(app: String, environment: APNsEnvironment, openIDs: [String]) async throws -> OpenIDResolution {
        try StoreValidation.app(app)
        var seen = Set<String>()
        var unique: [String] = []
        for (index, openID) in openIDs.enumerated() {
            try StoreValidation.openID(openID, field: "openIDs[\(index)]")
            if seen.insert(openID).inserted {
                unique.append(openID)
            }
        }
        var resolution = OpenIDResolution(tokens: [], unknownCount: 0, otherEnvironmentCount: 0)
        for start in stride(from: 0, to: unique.count, by: 1_000) {
            let batch = unique[start..<min(start + 1_000, unique.count)]
            let mappings = try await pipeline(batch.map { ["GET", .string(openIDKey(app: app, openID: $0))] })
            var found: [(openID: String, token: DeviceToken)] = []
            for (openID, reply) in zip(batch, mappings) {
                if let value = reply.string, let mapping = Self.parseMapping(value) {
                    found.append((openID, mapping.token))
                } else {
                    resolution.unknownCount += 1
                }
            }
            // The device must still name the openid: a mapping whose bind is still settling
            // (see DeviceRegistry+Binding) is not followed.
            let records = try await records(app: app, tokens: found.map(\.token))
            for (entry, record) in zip(found, records) {
                guard let record, record.openID == entry.openID else {
                    resolution.unknownCount += 1
                    continue
                }
                if record.environment != environment {
                    resolution.otherEnvironmentCount += 1
                } else if record.suspicion != nil {
                    resolution.suspectCount += 1
                } else {
                    resolution.tokens.append(entry.token)
                    resolution.ids.append(record.id)
                }
            }
        }
        return resolution
    }

    /// Reads buckets `range` of every shard of `task`: the shards devices move out of first,
    /// then (while a reshard runs) the ones they move into; a device read in both counts once,
    /// as read last.
    ///
    /// - Throws: ``StaleLayout`` when a shard belongs to another epoch than `layout`'s.
    func readBuckets(app: String, task: ShardTask, range: Range<Int>, layout: RegistryLayout) async throws -> [(DeviceToken, [UInt8])] {
        let (first, then) = try layout.shardsOfTask(task.shard, of: task.count)
        // A token lives in one bucket of one shard, except while a reshard copies it from an
        // old shard (`first`) to a new one (`then`): only then is a token read twice, the
        // newer record winning. Without a reshard, no token needs hashing.
        let mayRepeat = !first.isEmpty && !then.isEmpty
        var found: [(token: [UInt8], record: [UInt8])] = []
        var devices: [[UInt8]: [UInt8]] = [:]
        var order: [[UInt8]] = []
        for shards in [first, then] where !shards.isEmpty {
            let calls = shards.map { shard in
                let keys = ShardKeyspace(app: app, shard: shard)
                return RedisScriptCall(
                    RegistryScripts.readBuckets, keys: [.string(keys.counts)] + range.map { .string(keys.bucket($0)) }, arguments: [])
            }
            for reply in try await run(calls) {
                guard let parts = reply.array, parts.count == range.count + 1, let epoch = parts[0].int else {
                    throw StoreError.unexpected(reply, from: "the read-buckets script")
                }
                guard epoch == layout.epoch else { throw StaleLayout() }
                for bucket in parts.dropFirst() {
                    guard let fields = bucket.array, fields.count.isMultiple(of: 2) else {
                        throw StoreError.unexpected(bucket, from: "the read-buckets script")
                    }
                    for index in stride(from: 0, to: fields.count, by: 2) {
                        guard let token = fields[index].bytes, let record = fields[index + 1].bytes else {
                            throw StoreError.unexpected(bucket, from: "the read-buckets script")
                        }
                        if !mayRepeat {
                            found.append((token, record))
                        } else if devices.updateValue(record, forKey: token) == nil {
                            order.append(token)
                        }
                    }
                }
            }
        }
        if mayRepeat {
            found = order.map { ($0, devices[$0]!) }
        }
        return try found.map { bytes, record in
            guard let token = DeviceToken(markerBytes: bytes) else {
                throw StoreError(.unexpectedReply, field: nil, message: "a bucket of app \(app) holds a field that is not a token")
            }
            return (token, record)
        }
    }

    /// The matcher of `filter`; `nil` when nothing can match (a tag of `all` no device carries).
    func matcher(app: String, environment: APNsEnvironment, filter: ScanFilter) async throws -> RecordMatcher? {
        switch filter {
        case .devices:
            return RecordMatcher(environment: environment, suspects: false)
        case .suspects:
            return RecordMatcher(environment: environment, suspects: true)
        case .tags(let expression):
            try Self.validate(expression)
            let known = try await knownTagIDs(app: app, expression.all + expression.any + expression.none)
            var matcher = RecordMatcher(environment: environment, suspects: false)
            for name in expression.all {
                guard let id = known[name] else { return nil }
                matcher.all.insert(id)
            }
            if !expression.any.isEmpty {
                matcher.any = Set(expression.any.compactMap { known[$0] })
                guard !matcher.any!.isEmpty else { return nil }
            }
            matcher.none = Set(expression.none.compactMap { known[$0] })
            return matcher
        }
    }

    static func validate(_ expression: TagExpression) throws(StoreError) {
        guard !expression.all.isEmpty || !expression.any.isEmpty else {
            throw StoreError(.invalidTagExpression, field: "filter", message: "needs a non-empty 'all' or 'any'")
        }
        let total = expression.all.count + expression.any.count + expression.none.count
        guard total <= StoreValidation.maxExpressionTags else {
            throw StoreError(
                .invalidTagExpression, field: "filter", message: "has \(total) tags, more than \(StoreValidation.maxExpressionTags)")
        }
        try StoreValidation.tags(expression.all, field: "filter.all")
        try StoreValidation.tags(expression.any, field: "filter.any")
        try StoreValidation.tags(expression.none, field: "filter.none")
    }
}

/// Whether a stored record belongs to a scan's audience, read from the record's bytes without
/// decoding it (``PackedDevice``'s layout).
struct RecordMatcher: Sendable {
    var environment: APNsEnvironment
    /// Whether the scan wants the suspect devices (and only them).
    var suspects: Bool
    var all: Set<UInt16> = []
    var any: Set<UInt16>?
    var none: Set<UInt16> = []

    /// The record's device id when it matches; `nil` otherwise (or when it is not a record).
    func id(ofMatching record: [UInt8]) -> UInt32? {
        guard record.count >= 13, record[0] == PackedDevice.version else { return nil }
        let flags = record[1]
        guard (flags & 1 != 0) == (environment == .production), (flags & 2 != 0) == suspects else { return nil }
        if !all.isEmpty || any != nil || !none.isEmpty {
            let count = Int(record[12])
            guard record.count >= 13 + 2 * count else { return nil }
            var matchedAll = 0
            var matchedAny = any == nil
            for index in 0..<count {
                let tag = UInt16(record[13 + 2 * index]) | UInt16(record[14 + 2 * index]) << 8
                if none.contains(tag) { return nil }
                if all.contains(tag) { matchedAll += 1 }
                if !matchedAny, any!.contains(tag) { matchedAny = true }
            }
            guard matchedAll == all.count, matchedAny else { return nil }
        }
        return UInt32(record[2]) | UInt32(record[3]) << 8 | UInt32(record[4]) << 16 | UInt32(record[5]) << 24
    }
}
