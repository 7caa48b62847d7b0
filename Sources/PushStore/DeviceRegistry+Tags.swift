import APNsCore
import Redis

extension DeviceRegistry {
    /// Adds tags to a registered device (a client SDK's "set tags"); tags it has are kept.
    ///
    /// - Returns: how many of `tags` the device did not have before.
    /// - Throws: ``StoreError`` — `deviceNotRegistered`, or naming `app` or `tags[i]`;
    ///   `RedisClientError`.
    @discardableResult
    package func addTags(_ tags: [String], app: String, token: DeviceToken) async throws -> Int {
        try StoreValidation.app(app)
        try StoreValidation.tags(tags, field: "tags")
        guard !tags.isEmpty else {
            guard try await records(app: app, tokens: [token])[0] != nil else { throw Self.notRegistered(token, app: app) }
            return 0
        }
        let ids = try await ensureTagIDs(app: app, tags)
        let added = Set(tags.map { ids[$0]! })
        let update = try await update(app: app, tokens: [token]) { _, token, old in
            guard var record = old else { throw Self.notRegistered(token, app: app) }
            guard !added.isSubset(of: record.tags) else { return .keep }
            record.tags = try Self.tags(record.tags + Array(added), field: "tags")
            return .write(record)
        }[0]
        return added.subtracting(update.old?.tags ?? []).count
    }

    /// Removes tags from a registered device (a client SDK's "delete tags").
    ///
    /// - Returns: how many of `tags` the device had.
    /// - Throws: ``StoreError`` — `deviceNotRegistered`, or naming `app` or `tags[i]`;
    ///   `RedisClientError`.
    @discardableResult
    package func removeTags(_ tags: [String], app: String, token: DeviceToken) async throws -> Int {
        try StoreValidation.app(app)
        try StoreValidation.tags(tags, field: "tags")
        let removed = Set(try await knownTagIDs(app: app, tags).values)
        let update = try await update(app: app, tokens: [token]) { _, token, old in
            guard var record = old else { throw Self.notRegistered(token, app: app) }
            guard !removed.isDisjoint(with: record.tags) else { return .keep }
            record.tags = record.tags.filter { !removed.contains($0) }
            return .write(record)
        }[0]
        return removed.intersection(update.old?.tags ?? []).count
    }

    /// The tags of a registered device, sorted (a client SDK's "list tags").
    ///
    /// - Throws: ``StoreError`` — `deviceNotRegistered`, or naming `app`; `RedisClientError`.
    package func tags(app: String, token: DeviceToken) async throws -> [String] {
        guard let record = try await device(app: app, token: token) else {
            throw Self.notRegistered(token, app: app)
        }
        return record.tags
    }

    /// Every tag of `app` with the number of devices carrying it (both environments), merged
    /// from the shards' tag counts.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func appTags(app: String) async throws -> [String: Int] {
        try StoreValidation.app(app)
        // Read afresh: counts of a layout this process read before a reshard would miss shards.
        let layout = try await refreshLayout(app: app)
        let replies = try await pipeline(
            (0..<layout.shards).map { ["HGETALL", .string(ShardKeyspace(app: app, shard: $0).tagCounts)] }
        )
        var counts: [UInt16: Int] = [:]
        for reply in replies {
            guard let fields = reply.array, fields.count.isMultiple(of: 2) else {
                throw StoreError.unexpected(reply, from: "HGETALL")
            }
            for index in stride(from: 0, to: fields.count, by: 2) {
                guard let tag = fields[index].string.flatMap({ UInt16($0) }), let count = fields[index + 1].int else {
                    throw StoreError.unexpected(reply, from: "HGETALL")
                }
                counts[tag, default: 0] += Int(count)
            }
        }
        let names = try await tagNames(app: app, counts.keys)
        var named: [String: Int] = [:]
        for (id, count) in counts where count > 0 {
            if let name = names[id] { named[name] = count }
        }
        return named
    }

    static func notRegistered(_ token: DeviceToken, app: String) -> StoreError {
        StoreError(.deviceNotRegistered, field: "token", message: "device \(token) is not registered for app \(app)")
    }
}
