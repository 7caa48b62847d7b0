import APNsCore
import Redis

/// Users and app-wide operations: look a user up by openid, log a user out without unbinding the
/// device, remove a tag from every device of an app, walk every device of an app (export).
extension DeviceRegistry {
    /// The device `openID` is logged in on, or `nil` when the openid is bound to no device.
    ///
    /// - Throws: ``StoreError`` naming `app` or `openID`; `RedisClientError`.
    package func user(app: String, openID: String) async throws -> DeviceRecord? {
        try StoreValidation.app(app)
        try StoreValidation.openID(openID)
        guard let mapping = try await openIDMapping(app: app, openID: openID) else { return nil }
        // A mapping whose bind is still settling, or whose device moved on, is not followed.
        guard let record = try await device(app: app, token: mapping.token), record.openID == openID else { return nil }
        return record
    }

    /// Logs `openID` out: the device it is logged in on keeps its registration, environment and
    /// tags (its token still receives broadcasts and tag jobs) and no longer names a user; the
    /// openid no longer resolves to a device.
    ///
    /// A login of the same openid that lands meanwhile wins: its newer binding generation is
    /// neither cleared nor released (the steps of `DeviceRegistry+Binding`, 4 and 3).
    ///
    /// - Returns: the token of the device the user was logged out of; `nil` when the openid was
    ///   logged in nowhere (or a newer login won).
    /// - Throws: ``StoreError`` naming `app` or `openID`; `RedisClientError`.
    @discardableResult
    package func logOut(app: String, openID: String) async throws -> DeviceToken? {
        try StoreValidation.app(app)
        try StoreValidation.openID(openID)
        guard let mapping = try await openIDMapping(app: app, openID: openID) else { return nil }
        let detached = try await update(app: app, tokens: [mapping.token]) { _, _, old in
            guard var record = old, record.openID == openID, Int64(record.generation) <= mapping.generation else { return .keep }
            record.openID = nil
            record.generation = 0
            return .write(record)
        }[0]
        // Released only while it is still this binding (a stale one is cleaned up too).
        _ = try await run([releaseCall(app: app, openID: openID, token: mapping.token, generation: mapping.generation)])
        return detached.changed ? mapping.token : nil
    }

    /// Removes `tag` from every device of `app` that carries it, shard by shard (memory bounded
    /// by a page of buckets). The tag stays in the app's dictionary (ids are never reused); its
    /// count falls to zero, so ``appTags(app:)`` no longer lists it.
    ///
    /// Each device is changed by compare and set, so binds and tag changes that run meanwhile
    /// are not lost; a device tagged again while the removal runs may keep the tag.
    ///
    /// - Returns: how many devices carried the tag.
    /// - Throws: ``StoreError`` naming `app` or `tag`; `RedisClientError`.
    @discardableResult
    package func removeTagFromEveryDevice(app: String, tag: String) async throws -> Int {
        try StoreValidation.app(app)
        try StoreValidation.tag(tag, field: "tag")
        guard let id = try await knownTagIDs(app: app, [tag])[tag] else { return 0 }
        var removed = 0
        try await forEachDevicePage(app: app) { page in
            let tagged = page.filter { $0.record.tags.contains(id) }.map(\.token)
            let updates = try await update(app: app, tokens: tagged) { _, _, old in
                guard var record = old, record.tags.contains(id) else { return .keep }
                record.tags.removeAll { $0 == id }
                return .write(record)
            }
            removed += updates.count { $0.changed }
        }
        return removed
    }

    /// Calls `body` with every device of `app` (both environments, suspect ones too), a page at
    /// a time (the devices of a few buckets of a shard), until every shard has been read.
    ///
    /// Every device registered for the whole walk is passed exactly once; one bound or unbound
    /// during the walk may or may not be. A reshard may run meanwhile.
    ///
    /// - Throws: ``StoreError`` naming `app`; what `body` throws; `RedisClientError`.
    package func forEachDevice(app: String, _ body: ([DeviceRecord]) async throws -> Void) async throws {
        try StoreValidation.app(app)
        try await forEachDevicePage(app: app) { page in
            let names = try await tagNames(app: app, page.flatMap(\.record.tags))
            try await body(
                page.map { token, record in
                    DeviceRecord(
                        token: token, environment: record.environment, openID: record.openID, registeredAt: record.registeredAt,
                        tags: record.tags.compactMap { names[$0] }.sorted(), suspicion: record.suspicion)
                })
        }
    }

    /// The buckets a page of ``forEachDevice(app:_:)`` reads: 16 at first (about 1,000 devices
    /// per page for an app of 10 million devices in 16 shards), up to 256 while a read brings
    /// fewer than 250 devices (a small app's shard in 8 reads, not 64).
    static func walkGroup() -> BucketGroup {
        BucketGroup(first: 16, largest: 256, sparse: 250)
    }

    /// Every stored device of `app`, a page of buckets of one shard task at a time
    /// (``walkGroup()``), decoded.
    private func forEachDevicePage(
        app: String, _ body: ([(token: DeviceToken, record: PackedDevice)]) async throws -> Void
    ) async throws {
        // Tasks keep their count when a reshard starts meanwhile (see ShardTask).
        let tasks = try await layout(app: app).taskCount
        for shard in 0..<tasks {
            let task = ShardTask(shard: shard, of: tasks)
            var group = Self.walkGroup()
            var start = 0
            while start < ShardKeyspace.bucketCount {
                let range = group.range(from: start, of: ShardKeyspace.bucketCount)
                let devices = try await withLayout(app: app) { layout in
                    try await readBuckets(app: app, task: task, range: range, layout: layout)
                }
                start = range.upperBound
                group.read(devices.count)
                guard !devices.isEmpty else { continue }
                try await body(try devices.map { token, bytes in (token, try Self.decode(bytes)) })
            }
        }
    }

    /// The device and binding generation `openID` maps to, or `nil`.
    private func openIDMapping(app: String, openID: String) async throws -> (token: DeviceToken, generation: Int64)? {
        let reply = try await pipeline([["GET", .string(openIDKey(app: app, openID: openID))]])[0]
        return reply.string.flatMap(Self.parseMapping)
    }
}
