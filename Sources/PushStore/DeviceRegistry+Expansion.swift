import APNsCore
import Foundation
import PushCore
import Redis

/// What the expand stage reads: shard scans for broadcasts, openid resolution, tag audiences.
/// Each is bounded by the caller's `count` or list, never by the size of the app.
extension DeviceRegistry {
    /// One `SSCAN` round over the shard's token set of `environment`.
    ///
    /// Start with cursor 0 and follow ``ShardScanPage/cursor`` until ``ShardScanPage/isComplete``.
    ///
    /// - Parameter count: the `COUNT` hint (Redis may return somewhat more or fewer).
    /// - Throws: ``DeviceRegistryError`` naming `app`, `shard` or `count`; `RedisClientError`.
    public func scanShard(
        app: String,
        shard: Int,
        environment: APNsEnvironment,
        cursor: UInt64,
        count: Int
    ) async throws -> ShardScanPage {
        try RegistryValidation.app(app)
        try validateShard(shard, app: app)
        return try await scan(key: ShardKeyspace(app: app, shard: shard).tokens(environment), cursor: cursor, count: count)
    }

    /// Resolves openids to the device each last logged in on, keeping only devices registered in
    /// `environment` and not kept aside as suspect. Duplicate openids count once.
    ///
    /// Work and memory are proportional to `openIDs` (resolved 1,000 per pipeline); the expand
    /// stage passes a job's openids, which the job schema bounds.
    ///
    /// - Throws: ``DeviceRegistryError`` naming `app` or `openIDs[i]`; `RedisClientError`.
    public func resolveOpenIDs(app: String, environment: APNsEnvironment, openIDs: [String]) async throws -> OpenIDResolution {
        try RegistryValidation.app(app)
        var seen = Set<String>()
        var unique: [String] = []
        for (index, openID) in openIDs.enumerated() {
            try RegistryValidation.openID(openID, field: "openIDs[\(index)]")
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
            let records = try await pipeline(
                found.map {
                    let keys = ShardKeyspace(app: app, shard: shard(of: $0.token, app: app))
                    return ["HMGET", .string(keys.device($0.token)), "env", "openid", "suspect"]
                }
            )
            for (entry, reply) in zip(found, records) {
                guard let fields = reply.array, fields.count == 3 else {
                    throw Self.unexpected(reply, from: "HMGET")
                }
                guard fields[1].string == entry.openID, let registered = fields[0].string else {
                    resolution.unknownCount += 1
                    continue
                }
                if registered != environment.rawValue {
                    resolution.otherEnvironmentCount += 1
                } else if !fields[2].isNull {
                    resolution.suspectCount += 1
                } else {
                    resolution.tokens.append(entry.token)
                }
            }
        }
        return resolution
    }

    /// Materialises the tokens of one shard that match `expression` in `environment` — every tag
    /// of `all`, at least one of `any` (when not empty), none of `none` — into a temporary set
    /// in the shard's slot, in one script, and returns its key.
    ///
    /// Read it with ``scanTagAudience(_:cursor:count:)``, then ``releaseTagAudience(_:)``; or
    /// use ``withTagAudience(app:shard:environment:expression:_:)``. The set expires after
    /// ``DeviceRegistryConfiguration/audienceTimeToLive`` if never released.
    ///
    /// - Throws: ``DeviceRegistryError`` naming `app`, `shard`, `expression` or
    ///   `expression.all[i]` (and `any`, `none`); `RedisClientError`.
    public func tagAudience(
        app: String,
        shard: Int,
        environment: APNsEnvironment,
        expression: TagExpression
    ) async throws -> TagAudience {
        try RegistryValidation.app(app)
        try validateShard(shard, app: app)
        guard !expression.all.isEmpty || !expression.any.isEmpty else {
            throw DeviceRegistryError(.invalidTagExpression, field: "expression", message: "needs a non-empty 'all' or 'any'")
        }
        let total = expression.all.count + expression.any.count + expression.none.count
        guard total <= RegistryValidation.maxExpressionTags else {
            throw DeviceRegistryError(
                .invalidTagExpression,
                field: "expression",
                message: "has \(total) tags, more than \(RegistryValidation.maxExpressionTags)"
            )
        }
        try RegistryValidation.tags(expression.all, field: "expression.all")
        try RegistryValidation.tags(expression.any, field: "expression.any")
        try RegistryValidation.tags(expression.none, field: "expression.none")

        let keys = ShardKeyspace(app: app, shard: shard)
        let id = UUID().uuidString.lowercased()
        let destination = keys.audience(id)
        var scriptKeys: [RedisArgument] = [
            .string(destination), .string(keys.audienceScratch(id)), .string(keys.tokens(environment)),
        ]
        for tag in expression.all + expression.any + expression.none {
            scriptKeys.append(.string(keys.tag(tag)))
        }
        let ttl = configuration.audienceTimeToLive.components
        let ttlMilliseconds = Int(ttl.seconds) * 1_000 + Int(ttl.attoseconds / 1_000_000_000_000_000)
        let reply = try await run([
            RedisScriptCall(
                RegistryScripts.tagAudience,
                keys: scriptKeys,
                arguments: [
                    .integer(expression.all.count), .integer(expression.any.count), .integer(expression.none.count),
                    .integer(max(ttlMilliseconds, 1)),
                ]
            )
        ])[0]
        guard let count = reply.int else {
            throw Self.unexpected(reply, from: "the tag audience script")
        }
        return TagAudience(app: app, shard: shard, environment: environment, key: destination, count: Int(count))
    }

    /// One `SSCAN` round over a materialised tag audience.
    ///
    /// - Throws: ``DeviceRegistryError`` naming `count`; `RedisClientError`.
    public func scanTagAudience(_ audience: TagAudience, cursor: UInt64, count: Int) async throws -> ShardScanPage {
        try await scan(key: audience.key, cursor: cursor, count: count)
    }

    /// Deletes a materialised tag audience.
    public func releaseTagAudience(_ audience: TagAudience) async throws {
        _ = try await client.send("UNLINK", .string(audience.key))
    }

    /// Materialises a tag audience, runs `body` with it and deletes it afterwards, also when
    /// `body` throws.
    public func withTagAudience<Value>(
        app: String,
        shard: Int,
        environment: APNsEnvironment,
        expression: TagExpression,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (TagAudience) async throws -> sending Value
    ) async throws -> sending Value {
        let audience = try await tagAudience(app: app, shard: shard, environment: environment, expression: expression)
        do {
            let value = try await body(audience)
            try await releaseTagAudience(audience)
            return value
        } catch {
            try? await releaseTagAudience(audience)
            throw error
        }
    }

    func scan(key: String, cursor: UInt64, count: Int) async throws -> ShardScanPage {
        guard count > 0 else {
            throw DeviceRegistryError(.invalidArgument, field: "count", message: "must be positive, is \(count)")
        }
        let reply = try await client.send("SSCAN", .string(key), .string(String(cursor)), "COUNT", .integer(count))
        guard let parts = reply.array, parts.count == 2,
            let next = parts[0].string.flatMap({ UInt64($0) }),
            let members = parts[1].array
        else {
            throw Self.unexpected(reply, from: "SSCAN")
        }
        var tokens: [DeviceToken] = []
        tokens.reserveCapacity(members.count)
        for member in members {
            guard let hex = member.string, let token = try? DeviceToken(hex: hex) else {
                throw Self.unexpected(member, from: "SSCAN of \(key)")
            }
            tokens.append(token)
        }
        return ShardScanPage(cursor: next, tokens: tokens)
    }

    func validateShard(_ shard: Int, app: String) throws(DeviceRegistryError) {
        let count = shardCount(for: app)
        guard (0..<count).contains(shard) else {
            throw DeviceRegistryError(.invalidArgument, field: "shard", message: "must be in 0..<\(count), is \(shard)")
        }
    }
}
