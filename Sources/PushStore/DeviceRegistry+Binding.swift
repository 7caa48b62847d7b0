import APNsCore
import PushCore
import Redis

/// The steps of a bind and an unbind. A bind with an openid is five single-slot steps:
///
/// 1. shard step (token's slot, the record's compare-and-set): env, time, tags; openid := U
///    with a new generation g; gives the previous openid P and its generation;
/// 2. claim (U's slot, `claimOpenID`): U → (token, g) unless U already points at a newer
///    binding of the same token; returns the displaced (T0, g0);
/// 3. release P (P's slot, `releaseOpenID`): delete P → token if it is still (token, ≤ previous g);
/// 4. detach T0 (T0's slot, a compare-and-set): clear T0's openid if it is still U at ≤ g0;
/// 5. verify (token's slot): if the token's openid is no longer U (a later bind or an unbind
///    won the shard slot), release U → (token, ≤ g).
///
/// The steps are internal so that tests can interleave two binds deterministically.
extension DeviceRegistry {
    /// Binds a batch of validated devices of one app: step 1 for all, then the openid steps.
    func bindBatch(_ devices: [DeviceRegistration], app: String, assumeAbsent: Bool = false) async throws {
        let bindings = try await shardStep(devices, app: app, assumeAbsent: assumeAbsent)
        try await settleOpenIDs(bindings, app: app)
        try await writeTimeZones(devices, app: app)
    }

    /// Step 1 for every device; returns the openid bindings to settle.
    func shardStep(_ devices: [DeviceRegistration], app: String, assumeAbsent: Bool = false) async throws -> [OpenIDBinding] {
        let now = clock()
        let tagIDs = try await ensureTagIDs(app: app, devices.flatMap(\.tags))
        let updates = try await update(app: app, tokens: devices.map(\.token), assumeAbsent: assumeAbsent) { index, _, old in
            let device = devices[index]
            var record = old ?? PackedDevice(environment: device.environment, registeredAt: 0)
            record.environment = device.environment
            record.registeredAt = device.registeredAt ?? now
            // Binding again trusts a suspect device again.
            record.suspicion = nil
            if !device.tags.isEmpty {
                record.tags = try Self.tags(record.tags + device.tags.map { tagIDs[$0]! }, field: "tags")
            }
            if let openID = device.openID {
                record.openID = openID
            }
            return .write(record, newDevice: old == nil, newBinding: device.openID != nil)
        }
        var bindings: [OpenIDBinding] = []
        for (device, update) in zip(devices, updates) {
            guard let openID = device.openID, let new = update.new else { continue }
            bindings.append(
                OpenIDBinding(
                    token: device.token,
                    openID: openID,
                    generation: Int64(new.generation),
                    previousOpenID: update.old?.openID,
                    previousGeneration: Int64(update.old?.generation ?? 0)
                )
            )
        }
        return bindings
    }

    /// A device's tag ids, sorted and without duplicates.
    ///
    /// - Throws: ``StoreError`` (`invalidTag`, field `field`) beyond ``PackedDevice/maxTags``.
    static func tags(_ ids: [UInt16], field: String) throws(StoreError) -> [UInt16] {
        var unique = ids
        if unique.count > 1 {
            unique.sort()
            var kept = 1
            for index in 1..<unique.count where unique[index] != unique[kept - 1] {
                unique[kept] = unique[index]
                kept += 1
            }
            unique.removeLast(unique.count - kept)
        }
        guard unique.count <= PackedDevice.maxTags else {
            throw StoreError(.invalidTag, field: field, message: "a device carries at most \(PackedDevice.maxTags) tags, would carry \(unique.count)")
        }
        return unique
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
            guard let value = reply.string else { throw StoreError.unexpected(reply, from: "the claim script") }
            return Self.parseMapping(value)
        }
    }

    /// Steps 3 and 4: release the device's previous openid, detach the displaced device.
    func cleanupStep(_ bindings: [OpenIDBinding], displaced: [(token: DeviceToken, generation: Int64)?], app: String) async throws {
        var releases: [RedisScriptCall] = []
        var detached: [(token: DeviceToken, openID: String, generation: Int64)] = []
        for (binding, displaced) in zip(bindings, displaced) {
            if let previous = binding.previousOpenID, previous != binding.openID {
                releases.append(releaseCall(app: app, openID: previous, token: binding.token, generation: binding.previousGeneration))
            }
            if let displaced, displaced.token != binding.token {
                detached.append((displaced.token, binding.openID, displaced.generation))
            }
        }
        _ = try await run(releases)
        _ = try await update(app: app, tokens: detached.map(\.token)) { index, _, old in
            let detach = detached[index]
            guard var record = old, record.openID == detach.openID, Int64(record.generation) <= detach.generation else { return .keep }
            record.openID = nil
            record.generation = 0
            return .write(record)
        }
    }

    /// Step 5: a binding whose device no longer carries its openid releases the mapping it set.
    func verifyStep(_ bindings: [OpenIDBinding], app: String) async throws {
        let records = try await records(app: app, tokens: bindings.map(\.token))
        var calls: [RedisScriptCall] = []
        for (binding, record) in zip(bindings, records) where record?.openID != binding.openID {
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
        if removal.removed {
            // Further steps: should they not happen, a location expires on its own, and the time
            // zone and receipt hours left behind are the same device's, should its token bind again.
            try await forgetTime(app: app, token: token)
            // Device tokens only: other kinds have no locations.
            if TokenKind.holdsDeviceTokens(app) { try await forgetLocation(app: app, token: token) }
        }
        return removal.removed
    }

    /// The shard part of an unbind: removes the device unless it is in another environment
    /// than `environment` or registered after `invalidSince`; whether it was removed, and the
    /// openid binding it had (to release).
    func unbindShardStep(
        app: String,
        token: DeviceToken,
        environment: APNsEnvironment?,
        invalidSince: Int64?
    ) async throws -> (removed: Bool, openID: String?, generation: Int64) {
        let update = try await update(app: app, tokens: [token]) { _, _, old in
            guard let old else { return .keep }
            if let environment, old.environment != environment { return .keep }
            if let invalidSince, old.registeredAt > invalidSince { return .keep }
            return .delete
        }[0]
        guard update.changed, let old = update.old else { return (false, nil, 0) }
        return (true, old.openID, Int64(old.generation))
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
