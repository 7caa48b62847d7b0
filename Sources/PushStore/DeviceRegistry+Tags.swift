import APNsCore
import Redis

extension DeviceRegistry {
    /// Adds tags to a registered device (a client SDK's "set tags"); tags it has are kept.
    ///
    /// - Returns: how many of `tags` the device did not have before.
    /// - Throws: ``DeviceRegistryError`` — `deviceNotRegistered`, or naming `app` or `tags[i]`;
    ///   `RedisClientError`.
    @discardableResult
    public func addTags(_ tags: [String], app: String, token: DeviceToken) async throws -> Int {
        try await changeTags(tags, app: app, token: token, script: RegistryScripts.addTags)
    }

    /// Removes tags from a registered device (a client SDK's "delete tags").
    ///
    /// - Returns: how many of `tags` the device had.
    /// - Throws: ``DeviceRegistryError`` — `deviceNotRegistered`, or naming `app` or `tags[i]`;
    ///   `RedisClientError`.
    @discardableResult
    public func removeTags(_ tags: [String], app: String, token: DeviceToken) async throws -> Int {
        try await changeTags(tags, app: app, token: token, script: RegistryScripts.removeTags)
    }

    /// The tags of a registered device, sorted (a client SDK's "list tags").
    ///
    /// - Throws: ``DeviceRegistryError`` — `deviceNotRegistered`, or naming `app`; `RedisClientError`.
    public func tags(app: String, token: DeviceToken) async throws -> [String] {
        guard let record = try await device(app: app, token: token) else {
            throw Self.notRegistered(token, app: app)
        }
        return record.tags
    }

    /// Every tag of `app` with the number of devices carrying it (both environments), merged
    /// from the shards' tag counts.
    ///
    /// - Throws: ``DeviceRegistryError`` naming `app`; `RedisClientError`.
    public func appTags(app: String) async throws -> [String: Int] {
        try RegistryValidation.app(app)
        let replies = try await pipeline(
            (0..<shardCount(for: app)).map { ["HGETALL", .string(ShardKeyspace(app: app, shard: $0).tagCounts)] }
        )
        var counts: [String: Int] = [:]
        for reply in replies {
            guard let fields = reply.array, fields.count.isMultiple(of: 2) else {
                throw Self.unexpected(reply, from: "HGETALL")
            }
            for index in stride(from: 0, to: fields.count, by: 2) {
                guard let tag = fields[index].string, let count = fields[index + 1].int else {
                    throw Self.unexpected(reply, from: "HGETALL")
                }
                counts[tag, default: 0] += Int(count)
            }
        }
        return counts
    }

    private func changeTags(_ tags: [String], app: String, token: DeviceToken, script: RedisScript) async throws -> Int {
        try RegistryValidation.app(app)
        try RegistryValidation.tags(tags, field: "tags")
        guard !tags.isEmpty else { return 0 }
        let keys = ShardKeyspace(app: app, shard: shard(of: token, app: app))
        var scriptKeys: [RedisArgument] = [
            .string(keys.device(token)), .string(keys.deviceTags(token)), .string(keys.tagCounts),
        ]
        var arguments: [RedisArgument] = [.string(token.hex)]
        for tag in tags {
            scriptKeys.append(.string(keys.tag(tag)))
            arguments.append(.string(tag))
        }
        let reply = try await run([RedisScriptCall(script, keys: scriptKeys, arguments: arguments)])[0]
        guard let changed = reply.int else {
            throw Self.unexpected(reply, from: "the tag script")
        }
        guard changed >= 0 else {
            throw Self.notRegistered(token, app: app)
        }
        return Int(changed)
    }

    static func notRegistered(_ token: DeviceToken, app: String) -> DeviceRegistryError {
        DeviceRegistryError(.deviceNotRegistered, field: "token", message: "device \(token) is not registered for app \(app)")
    }
}
