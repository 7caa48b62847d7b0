import APNsCore
import Redis

/// Tokens kept aside instead of removed. APNs's `BadDeviceToken` and `DeviceTokenNotForTopic`
/// usually mean a misconfiguration (a sandbox token sent to production, a wrong topic), and a
/// registry that removed on them would lose valid devices; only a 410 removes a token (see
/// ``removeIfNotRegisteredSince(app:token:environment:invalidSince:)``). A suspect token leaves
/// no audience, and keeps its record, tags and openid. It comes back when the device binds again, when an operator
/// restores it, or when it is found to belong to the other environment and moved there. The
/// mark is part of the device's record (``PackedDevice/suspicion``); scans leave such devices
/// out of every audience and ``scanSuspects(app:shard:environment:cursor:count:)`` lists them.
extension DeviceRegistry {
    /// Keeps a token aside as suspect, with APNs's reason, unless the device is no longer
    /// registered in `environment`, was registered again after `at`, or is suspect already.
    ///
    /// - Parameter at: when APNs answered (ms since 1970).
    /// - Returns: whether the token was marked now.
    /// - Throws: ``StoreError`` naming `app`, `reason` or `at`; `RedisClientError`.
    @discardableResult
    package func markSuspect(app: String, token: DeviceToken, environment: APNsEnvironment, reason: String, at: Int64) async throws -> Bool {
        try StoreValidation.app(app)
        try StoreValidation.name(reason, field: "reason", what: "reason")
        try StoreValidation.atLeast(0, at, field: "at")
        let suspicion = DeviceSuspicion(reason: reason, since: at)
        return try await update(app: app, tokens: [token]) { _, _, old in
            guard var record = old, record.environment == environment, record.suspicion == nil, record.registeredAt <= at else { return .keep }
            record.suspicion = suspicion
            return .write(record)
        }[0].changed
    }

    /// Returns a suspect token to its environment's set: an operator judged it valid.
    ///
    /// - Returns: whether the token was suspect.
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    @discardableResult
    package func restoreSuspect(app: String, token: DeviceToken) async throws -> Bool {
        try StoreValidation.app(app)
        return try await update(app: app, tokens: [token]) { _, _, old in
            guard var record = old, record.suspicion != nil else { return .keep }
            record.suspicion = nil
            return .write(record)
        }[0].changed
    }

    /// Moves a device from `environment` to the other one (APNs accepted its token there),
    /// clearing a suspect mark; its tags and openid stay. Nothing happens when the device is no
    /// longer registered in `environment` or was registered again after `at`.
    ///
    /// - Parameter at: when the check that found the token valid there started (ms since 1970).
    /// - Returns: whether the device was moved.
    /// - Throws: ``StoreError`` naming `app` or `at`; `RedisClientError`.
    @discardableResult
    package func moveToOtherEnvironment(app: String, token: DeviceToken, from environment: APNsEnvironment, at: Int64) async throws -> Bool {
        try StoreValidation.app(app)
        try StoreValidation.atLeast(0, at, field: "at")
        return try await update(app: app, tokens: [token]) { _, _, old in
            guard var record = old, record.environment == environment, record.registeredAt <= at else { return .keep }
            record.environment = environment.other
            record.suspicion = nil
            return .write(record)
        }[0].changed
    }

    /// One page of the suspect devices of `environment` in shard task `shard` (of the app's
    /// current task count); follow the cursor as with
    /// ``scanShard(app:task:environment:filter:cursor:count:)``.
    ///
    /// - Throws: ``StoreError`` naming `app`, `shard` or `count`; `RedisClientError`.
    package func scanSuspects(app: String, shard: Int, environment: APNsEnvironment, cursor: UInt64, count: Int) async throws -> ShardScanPage {
        try await scanShard(app: app, shard: shard, environment: environment, filter: .suspects, cursor: cursor, count: count)
    }
}
