import APNsCore
import Redis

/// Tokens kept aside instead of removed. APNs's `BadDeviceToken` and `DeviceTokenNotForTopic`
/// usually mean a misconfiguration (a sandbox token sent to production, a wrong topic), and a
/// registry that removed on them would lose valid devices; only a 410 removes a token (see
/// ``removeIfNotRegisteredSince(app:token:environment:invalidSince:)``). A suspect token leaves
/// its environment's set for the shard's suspect set, so no audience reaches it, and keeps its
/// record, tags and openid. It comes back when the device binds again, when an operator
/// restores it, or when it is found to belong to the other environment and moved there.
extension DeviceRegistry {
    /// Keeps a token aside as suspect, with APNs's reason, unless the device is no longer
    /// registered in `environment`, was registered again after `at`, or is suspect already.
    ///
    /// - Parameter at: when APNs answered (ms since 1970).
    /// - Returns: whether the token was marked now.
    /// - Throws: ``DeviceRegistryError`` naming `app`, `reason` or `at`; `RedisClientError`.
    @discardableResult
    public func markSuspect(app: String, token: DeviceToken, environment: APNsEnvironment, reason: String, at: Int64) async throws -> Bool {
        try RegistryValidation.app(app)
        try RegistryValidation.name(reason, field: "reason", what: "reason")
        try RegistryValidation.atLeast(0, at, field: "at")
        let keys = ShardKeyspace(app: app, shard: shard(of: token, app: app))
        let reply = try await run([
            RedisScriptCall(
                RegistryScripts.markSuspect,
                keys: [.string(keys.device(token)), .string(keys.tokens(environment)), .string(keys.suspects(environment))],
                arguments: [.string(token.hex), .string(environment.rawValue), .string(reason), .integer(Int(at))])
        ])[0]
        return try Self.flag(reply, from: "the mark-suspect script")
    }

    /// Returns a suspect token to its environment's set: an operator judged it valid.
    ///
    /// - Returns: whether the token was suspect.
    /// - Throws: ``DeviceRegistryError`` naming `app`; `RedisClientError`.
    @discardableResult
    public func restoreSuspect(app: String, token: DeviceToken) async throws -> Bool {
        try RegistryValidation.app(app)
        let keys = ShardKeyspace(app: app, shard: shard(of: token, app: app))
        let reply = try await run([
            RedisScriptCall(
                RegistryScripts.restoreSuspect,
                keys: [
                    .string(keys.device(token)), .string(keys.tokens(.sandbox)), .string(keys.tokens(.production)),
                    .string(keys.suspects(.sandbox)), .string(keys.suspects(.production)),
                ],
                arguments: [.string(token.hex)])
        ])[0]
        return try Self.flag(reply, from: "the restore script")
    }

    /// Moves a device from `environment` to the other one (APNs accepted its token there),
    /// clearing a suspect mark; its tags and openid stay. Nothing happens when the device is no
    /// longer registered in `environment` or was registered again after `at`.
    ///
    /// - Parameter at: when the check that found the token valid there started (ms since 1970).
    /// - Returns: whether the device was moved.
    /// - Throws: ``DeviceRegistryError`` naming `app` or `at`; `RedisClientError`.
    @discardableResult
    public func moveToOtherEnvironment(app: String, token: DeviceToken, from environment: APNsEnvironment, at: Int64) async throws -> Bool {
        try RegistryValidation.app(app)
        try RegistryValidation.atLeast(0, at, field: "at")
        let keys = ShardKeyspace(app: app, shard: shard(of: token, app: app))
        let other = environment.other
        let reply = try await run([
            RedisScriptCall(
                RegistryScripts.moveEnvironment,
                keys: [
                    .string(keys.device(token)), .string(keys.tokens(environment)), .string(keys.suspects(environment)),
                    .string(keys.tokens(other)),
                ],
                arguments: [.string(token.hex), .string(environment.rawValue), .string(other.rawValue), .integer(Int(at))])
        ])[0]
        return try Self.flag(reply, from: "the move-environment script")
    }

    /// One `SSCAN` round over the shard's suspect tokens of `environment` (follow the cursor as
    /// with ``scanShard(app:shard:environment:cursor:count:)``).
    ///
    /// - Throws: ``DeviceRegistryError`` naming `app`, `shard` or `count`; `RedisClientError`.
    public func scanSuspects(app: String, shard: Int, environment: APNsEnvironment, cursor: UInt64, count: Int) async throws -> ShardScanPage {
        try RegistryValidation.app(app)
        try validateShard(shard, app: app)
        return try await scan(key: ShardKeyspace(app: app, shard: shard).suspects(environment), cursor: cursor, count: count)
    }

    private static func flag(_ reply: RedisReply, from what: String) throws -> Bool {
        guard let value = reply.int, value == 0 || value == 1 else { throw unexpected(reply, from: what) }
        return value == 1
    }
}
