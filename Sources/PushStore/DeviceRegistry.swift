import APNsCore
import Foundation
import Redis
import Synchronization

/// The device registry of PushFleet: which devices each app has, in which APNs environment, who
/// is logged in on them and which tags they carry, kept in Redis.
///
/// It is the server side of a client SDK's calls: ``bind(app:token:environment:openID:tags:registeredAt:)``
/// when the app registers for notifications or a user logs in, ``unbind(app:token:)`` on logout
/// or uninstall, ``addTags(_:app:token:)`` / ``removeTags(_:app:token:)`` / ``tags(app:token:)``.
/// The expand stage reads it with ``scanShard(app:task:environment:filter:cursor:count:)`` and
/// ``resolveOpenIDs(app:environment:openIDs:)``; the feedback worker removes invalid tokens with
/// ``removeIfNotRegisteredSince(app:token:environment:invalidSince:)``.
///
/// A device is one packed record of about 15 bytes (``PackedDevice``) in a bucket hash of its
/// shard, with a device id that a job's sent state is kept by. An app's devices are split into
/// shards (``RegistryLayout``); the records of one shard live in its hash slot and every change
/// to one is a compare-and-set there (``update(app:tokens:assumeAbsent:_:)``). The shard count
/// can grow on a live registry (``reshard(app:to:concurrency:progress:)``). An openid's mapping lives in its
/// own slot; the openid steps of a bind or unbind are separate single-slot steps, ordered so
/// that concurrent binds converge (see `schemas/redis.md`).
package final class DeviceRegistry: Sendable {
    /// How apps are sharded at first, and the bulk settings.
    package let configuration: DeviceRegistryConfiguration
    let client: any RedisCommands
    let clock: @Sendable () -> Int64
    /// The stored layouts this process has read, per app.
    let layouts = Mutex<[String: RegistryLayout]>([:])
    /// Tag names and ids this process has seen.
    let tagDictionary = Mutex(TagDictionaryCache())

    /// How long a reshard's fence holds writes to a bucket back at most (a mover that died
    /// leaves one behind).
    static let fenceMilliseconds = 10_000

    /// Creates a registry over `client`.
    ///
    /// - Parameter clock: the time of a bind that does not name one, in milliseconds since 1970;
    ///   tests pass a fixed clock.
    package init(
        client: any RedisCommands,
        configuration: DeviceRegistryConfiguration = DeviceRegistryConfiguration(),
        clock: @escaping @Sendable () -> Int64 = StoreClock.system
    ) {
        self.client = client
        self.configuration = configuration
        self.clock = clock
    }

    // MARK: - Bind and unbind

    /// Binds one device: records the token in `environment` with its registration time, adds
    /// `tags`, and when `openID` is given makes the device that user's only device and the user
    /// the device's only user.
    ///
    /// Binding again updates the environment and the registration time. An openid maps only to
    /// the device it last logged in on (binding U to B removes U → A), and a device belongs to
    /// one openid at a time (binding A to V removes U → A). `openID: nil` keeps the device's
    /// current user.
    ///
    /// - Parameters:
    ///   - registeredAt: milliseconds since 1970; `nil` means the registry's clock.
    ///   - timeZone: the device's IANA time zone (``TimeZoneName``); `nil` keeps the one it has.
    /// - Throws: ``StoreError`` naming `app`, `openID`, `tags[i]`, `registeredAt` or `timeZone`;
    ///   `RedisClientError`.
    package func bind(
        app: String,
        token: DeviceToken,
        environment: APNsEnvironment,
        openID: String? = nil,
        tags: [String] = [],
        registeredAt: Int64? = nil,
        timeZone: String? = nil
    ) async throws {
        let device = DeviceRegistration(
            token: token, environment: environment, openID: openID, tags: tags, registeredAt: registeredAt, timeZone: timeZone)
        try StoreValidation.app(app)
        try Self.validate(device, fieldPrefix: "")
        try await bindBatch([device], app: app)
    }

    /// Binds many devices, as ``bind(app:token:environment:openID:tags:registeredAt:)`` does one
    /// by one: in batches of ``DeviceRegistryConfiguration/bulkBatchSize`` (one `EVALSHA` per
    /// shard and 500 devices), ``DeviceRegistryConfiguration/bulkConcurrency`` batches at a time.
    /// More devices than a batch holds are lined up shard by shard first
    /// (``RegistryLayout/indicesByHome(_:)``): 8,000 devices spread over 1,024 shards made calls of
    /// 8 devices each, whose own work (the shard's id sequences read and written whole) cost more
    /// than their devices.
    ///
    /// Devices that fit in one batch are bound in their order. Batches run concurrently, so of
    /// more devices only a token's own entries keep their order (a token listed twice ends in
    /// the state of either when a batch ends between them), and of two devices claiming one
    /// openid either may end with it. Every device is validated before anything is written. If
    /// a batch fails, the batches before it may have been written; binding is idempotent, so the
    /// whole call can be retried.
    ///
    /// - Throws: ``StoreError`` naming `devices[i].…`; `RedisClientError`.
    package func bind(_ devices: [DeviceRegistration], app: String) async throws {
        try StoreValidation.app(app)
        for (index, device) in devices.enumerated() {
            try Self.validate(device, fieldPrefix: "devices[\(index)].")
        }
        var lined = devices
        if devices.count > configuration.bulkBatchSize {
            let layout = try await writableLayout(app: app)
            lined = layout.indicesByHome(devices.map(\.token)).map { devices[$0] }
        }
        let batches = lined.batches(of: configuration.bulkBatchSize)
        try await withThrowingTaskGroup(of: Void.self) { group in
            var pending = batches.makeIterator()
            for _ in 0..<configuration.bulkConcurrency {
                guard let batch = pending.next() else { break }
                group.addTask { try await self.bindBatch(batch, app: app, assumeAbsent: true) }
            }
            while try await group.next() != nil {
                if let batch = pending.next() {
                    group.addTask { try await self.bindBatch(batch, app: app, assumeAbsent: true) }
                }
            }
        }
    }

    /// Unbinds a device (logout, uninstall): deletes its record (tags and environment with it),
    /// takes it off its shard's counts and releases its user's openid mapping.
    ///
    /// - Returns: whether the device was registered.
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    @discardableResult
    package func unbind(app: String, token: DeviceToken) async throws -> Bool {
        try StoreValidation.app(app)
        return try await remove(app: app, token: token, environment: nil, invalidSince: nil)
    }

    /// Removes a token APNs reported invalid, unless it was registered again since.
    ///
    /// For a 410 `Unregistered` with its timestamp: the token is removed only if its
    /// registration time is not after `invalidSince` (a device that registered again later
    /// keeps its token). Without a timestamp (400 `BadDeviceToken`) it is removed
    /// unconditionally. Either way only a token currently registered in `environment` is
    /// removed: a token since bound in the other environment is valid there. Idempotent.
    ///
    /// - Parameter invalidSince: APNs's timestamp in milliseconds since 1970, or `nil`.
    /// - Returns: whether the token was removed.
    /// - Throws: ``StoreError`` naming `app` or `invalidSince`; `RedisClientError`.
    @discardableResult
    package func removeIfNotRegisteredSince(
        app: String,
        token: DeviceToken,
        environment: APNsEnvironment,
        invalidSince: Int64?
    ) async throws -> Bool {
        try StoreValidation.app(app)
        if let invalidSince, invalidSince < 0 {
            throw StoreError(.invalidArgument, field: "invalidSince", message: "must not be negative, is \(invalidSince)")
        }
        return try await remove(app: app, token: token, environment: environment, invalidSince: invalidSince)
    }

    // MARK: - Reading devices

    /// The record of a device, or `nil` if it is not registered for `app`.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func device(app: String, token: DeviceToken) async throws -> DeviceRecord? {
        try await devices(app: app, tokens: [token])[0]
    }

    /// The records of `tokens`, in their order, `nil` for a token not registered for `app`:
    /// one pipeline per 500 tokens, and one read of the tag names they use.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func devices(app: String, tokens: [DeviceToken]) async throws -> [DeviceRecord?] {
        try StoreValidation.app(app)
        let records = try await self.records(app: app, tokens: tokens)
        let names = try await tagNames(app: app, records.lazy.compactMap { $0?.tags }.joined())
        return zip(tokens, records).map { token, record in
            record.map { record in
                DeviceRecord(
                    token: token,
                    environment: record.environment,
                    openID: record.openID,
                    registeredAt: record.registeredAt,
                    tags: record.tags.compactMap { names[$0] }.sorted(),
                    suspicion: record.suspicion
                )
            }
        }
    }

    /// The device ids of `tokens` in `app`'s registry, in their order, `nil` for a token not
    /// registered: what a device's badge and a job's sent state are kept by.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func deviceIDs(app: String, tokens: [DeviceToken]) async throws -> [UInt32?] {
        try StoreValidation.app(app)
        return try await records(app: app, tokens: tokens).map { $0?.id }
    }

    /// How many devices `app` has in each environment, suspect ones apart (every shard's
    /// counts, pipelined). While a reshard moves a bucket, its devices may count twice.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func deviceCount(app: String) async throws -> DeviceCount {
        try StoreValidation.app(app)
        // Read afresh: counts of a layout this process read before a reshard would miss shards.
        let layout = try await refreshLayout(app: app)
        let fields = ["sandbox", "production", "suspect:sandbox", "suspect:production"]
        let replies = try await pipeline(
            (0..<layout.shards).map { shard in
                ["HMGET", .string(ShardKeyspace(app: app, shard: shard).counts)] + fields.map { .string($0) }
            })
        var count = DeviceCount(sandbox: 0, production: 0)
        for reply in replies {
            guard let values = reply.array, values.count == fields.count else { throw StoreError.unexpected(reply, from: "HMGET of shard counts") }
            let numbers = try values.map { value -> Int in
                if value.isNull { return 0 }
                guard let text = value.string, let number = Int(text) else { throw StoreError.unexpected(reply, from: "HMGET of shard counts") }
                return number
            }
            count.add(numbers[0], in: .sandbox)
            count.add(numbers[1], in: .production)
            count.addSuspect(numbers[2], in: .sandbox)
            count.addSuspect(numbers[3], in: .production)
        }
        return count
    }

    // MARK: - Internals shared by the extensions

    /// Runs script calls pipelined; any script error throws (see `RedisCommands.runScripts`).
    func run(_ calls: [RedisScriptCall]) async throws -> [RedisReply] {
        try await client.runScripts(calls)
    }

    /// Sends plain commands pipelined; an error reply throws.
    func pipeline(_ commands: [[RedisArgument]]) async throws -> [RedisReply] {
        try await client.checkedPipeline(commands)
    }

    static func validate(_ device: DeviceRegistration, fieldPrefix: @autoclosure () -> String) throws(StoreError) {
        if let openID = device.openID {
            try StoreValidation.openID(openID, field: fieldPrefix() + "openID")
        }
        try StoreValidation.tags(device.tags, field: fieldPrefix() + "tags")
        if let registeredAt = device.registeredAt, registeredAt < 0 {
            throw StoreError(
                .invalidArgument,
                field: fieldPrefix() + "registeredAt",
                message: "must not be negative, is \(registeredAt)"
            )
        }
        if let timeZone = device.timeZone, let problem = TimeZoneName.problem(timeZone) {
            throw StoreError(.invalidArgument, field: fieldPrefix() + "timeZone", message: problem)
        }
    }
}
