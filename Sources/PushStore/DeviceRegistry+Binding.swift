import APNsCore
import Redis

/// The steps of a bind and an unbind. A bind with an openid is five single-slot steps:
///
/// 1. shard step (token's slot, script `bind`): env, time, tags; `openid` := U with a new
///    generation g; returns the previous openid P and its generation;
/// 2. claim (U's slot, `claimOpenID`): U → (token, g) unless U already points at a newer
///    binding of the same token; returns the displaced (T0, g0);
/// 3. release P (P's slot, `releaseOpenID`): delete P → token if it is still (token, ≤ previous g);
/// 4. detach T0 (T0's slot, `detachOpenID`): clear T0's openid if it is still U at ≤ g0;
/// 5. verify (token's slot): if the token's openid is no longer U (a later bind or an unbind
///    won the shard slot), release U → (token, ≤ g).
///
/// The steps are internal so that tests can interleave two binds deterministically.
extension DeviceRegistry {
    /// Binds a batch of validated devices of one app: step 1 for all, then the openid steps.
    func bindBatch(_ devices: [DeviceRegistration], app: String) async throws {
        let bindings = try await shardStep(devices, app: app)
        try await settleOpenIDs(bindings, app: app)
    }

    /// Step 1 for every device, in one pipeline; returns the openid bindings to settle.
    func shardStep(_ devices: [DeviceRegistration], app: String) async throws -> [OpenIDBinding] {
        let now = clock()
        var calls: [RedisScriptCall] = []
        calls.reserveCapacity(devices.count)
        for device in devices {
            let keys = ShardKeyspace(app: app, shard: shard(of: device.token, app: app))
            var scriptKeys: [RedisArgument] = [
                .string(keys.device(device.token)),
                .string(keys.deviceTags(device.token)),
                .string(keys.tokens(.sandbox)),
                .string(keys.tokens(.production)),
                .string(keys.tagCounts),
                .string(keys.sequence),
                .string(keys.suspects(.sandbox)),
                .string(keys.suspects(.production)),
            ]
            var arguments: [RedisArgument] = [
                .string(device.token.hex),
                .string(device.environment.rawValue),
                .integer(Int(device.registeredAt ?? now)),
                .string(device.openID ?? ""),
            ]
            for tag in device.tags {
                scriptKeys.append(.string(keys.tag(tag)))
                arguments.append(.string(tag))
            }
            calls.append(RedisScriptCall(RegistryScripts.bind, keys: scriptKeys, arguments: arguments))
        }
        let replies = try await run(calls)
        var bindings: [OpenIDBinding] = []
        for (device, reply) in zip(devices, replies) {
            guard let openID = device.openID else { continue }
            guard let fields = reply.array, fields.count == 3,
                let previous = fields[0].string, let previousGeneration = fields[1].int, let generation = fields[2].int,
                generation > 0
            else {
                throw Self.unexpected(reply, from: "the bind script")
            }
            bindings.append(
                OpenIDBinding(
                    token: device.token,
                    openID: openID,
                    generation: generation,
                    previousOpenID: previous.isEmpty ? nil : previous,
                    previousGeneration: previousGeneration
                )
            )
        }
        return bindings
    }

    /// Steps 2–5 for every binding, each step one pipeline.
    func settleOpenIDs(_ bindings: [OpenIDBinding], app: String) async throws {
        guard !bindings.isEmpty else { return }
        let displaced = try await claimStep(bindings, app: app)
        try await cleanupStep(bindings, displaced: displaced, app: app)
        try await verifyStep(bindings, app: app)
    }

    /// Step 2: returns, per binding, the (token, generation) it displaced from the openid, if any.
    func claimStep(_ bindings: [OpenIDBinding], app: String) async throws -> [(token: DeviceToken, generation: Int64)?] {
        let replies = try await run(
            bindings.map {
                RedisScriptCall(
                    RegistryScripts.claimOpenID,
                    keys: [.string(openIDKey(app: app, openID: $0.openID))],
                    arguments: [.string($0.token.hex), .integer(Int($0.generation))]
                )
            }
        )
        return try replies.map { reply in
            guard let value = reply.string else { throw Self.unexpected(reply, from: "the claim script") }
            return Self.parseMapping(value)
        }
    }

    /// Steps 3 and 4: release the device's previous openid, detach the displaced device.
    func cleanupStep(_ bindings: [OpenIDBinding], displaced: [(token: DeviceToken, generation: Int64)?], app: String) async throws {
        var calls: [RedisScriptCall] = []
        for (binding, displaced) in zip(bindings, displaced) {
            if let previous = binding.previousOpenID, previous != binding.openID {
                calls.append(releaseCall(app: app, openID: previous, token: binding.token, generation: binding.previousGeneration))
            }
            if let displaced, displaced.token != binding.token {
                let keys = ShardKeyspace(app: app, shard: shard(of: displaced.token, app: app))
                calls.append(
                    RedisScriptCall(
                        RegistryScripts.detachOpenID,
                        keys: [.string(keys.device(displaced.token))],
                        arguments: [.string(binding.openID), .integer(Int(displaced.generation))]
                    )
                )
            }
        }
        _ = try await run(calls)
    }

    /// Step 5: a binding whose device no longer carries its openid releases the mapping it set.
    func verifyStep(_ bindings: [OpenIDBinding], app: String) async throws {
        let replies = try await pipeline(
            bindings.map {
                let keys = ShardKeyspace(app: app, shard: shard(of: $0.token, app: app))
                return ["HGET", .string(keys.device($0.token)), "openid"]
            }
        )
        var calls: [RedisScriptCall] = []
        for (binding, reply) in zip(bindings, replies) where reply.string != binding.openID {
            calls.append(releaseCall(app: app, openID: binding.openID, token: binding.token, generation: binding.generation))
        }
        _ = try await run(calls)
    }

    /// Unbinds (conditionally, for the feedback worker) and then releases the device's openid.
    func remove(app: String, token: DeviceToken, environment: APNsEnvironment?, invalidSince: Int64?) async throws -> Bool {
        let removal = try await unbindShardStep(app: app, token: token, environment: environment, invalidSince: invalidSince)
        if removal.removed, let openID = removal.openID {
            _ = try await run([releaseCall(app: app, openID: openID, token: token, generation: removal.generation)])
        }
        return removal.removed
    }

    /// The shard part of an unbind: whether the device was removed, and the openid binding it
    /// had (to release).
    func unbindShardStep(
        app: String,
        token: DeviceToken,
        environment: APNsEnvironment?,
        invalidSince: Int64?
    ) async throws -> (removed: Bool, openID: String?, generation: Int64) {
        let keys = ShardKeyspace(app: app, shard: shard(of: token, app: app))
        let reply = try await run([
            RedisScriptCall(
                RegistryScripts.unbind,
                keys: [
                    .string(keys.device(token)),
                    .string(keys.deviceTags(token)),
                    .string(keys.tokens(.sandbox)),
                    .string(keys.tokens(.production)),
                    .string(keys.tagCounts),
                    .string(keys.suspects(.sandbox)),
                    .string(keys.suspects(.production)),
                ],
                arguments: [
                    .string(token.hex),
                    .string(keys.tagPrefix),
                    .string(environment?.rawValue ?? ""),
                    .integer(Int(invalidSince ?? -1)),
                ]
            )
        ])[0]
        guard let fields = reply.array, fields.count == 3,
            let removed = fields[0].int, let openID = fields[1].string, let generation = fields[2].int
        else {
            throw Self.unexpected(reply, from: "the unbind script")
        }
        return (removed == 1, openID.isEmpty ? nil : openID, generation)
    }

    func releaseCall(app: String, openID: String, token: DeviceToken, generation: Int64) -> RedisScriptCall {
        RedisScriptCall(
            RegistryScripts.releaseOpenID,
            keys: [.string(openIDKey(app: app, openID: openID))],
            arguments: [.string(token.hex), .integer(Int(generation))]
        )
    }

    /// Parses an openid mapping's value `"<token hex>:<generation>"`; `nil` for `""` or garbage.
    static func parseMapping(_ value: String) -> (token: DeviceToken, generation: Int64)? {
        guard let separator = value.firstIndex(of: ":"),
            let token = try? DeviceToken(hex: String(value[..<separator])),
            let generation = Int64(value[value.index(after: separator)...])
        else {
            return nil
        }
        return (token, generation)
    }
}
