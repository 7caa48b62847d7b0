import APNsCore
import PushCore
import Redis

/// A Live Activity broadcast channel PushFleet created for an app (``ChannelStore``).
package struct ChannelRecord: Hashable, Sendable {
    package var id: APNsChannelID
    package var messageStoragePolicy: APNsMessageStoragePolicy
    /// When it was created, in milliseconds since 1970.
    package var createdAt: Int64

    package init(id: APNsChannelID, messageStoragePolicy: APNsMessageStoragePolicy, createdAt: Int64) {
        self.id = id
        self.messageStoragePolicy = messageStoragePolicy
        self.createdAt = createdAt
    }

    /// The channel as the API and the CLI show it: `channel`, `environment`,
    /// `message-storage-policy` (`none` or `most-recent`), `created-at` (ms since 1970).
    package func jsonValue(environment: APNsEnvironment) -> JSONValue {
        [
            "channel": .string(id.rawValue), "environment": .string(environment.rawValue),
            "message-storage-policy": .string(messageStoragePolicy.name), "created-at": .number(JSONNumber(Int(createdAt))),
        ]
    }

    /// The stored value: `<policy>:<created-at>`.
    var storedValue: String { "\(messageStoragePolicy.rawValue):\(createdAt)" }

    init?(id: String, storedValue: String) {
        let parts = storedValue.split(separator: ":")
        guard let id = APNsChannelID(id), parts.count == 2, let number = Int(parts[0]),
            let policy = APNsMessageStoragePolicy(rawValue: number), let createdAt = Int64(parts[1])
        else { return nil }
        self.init(id: id, messageStoragePolicy: policy, createdAt: createdAt)
    }
}

/// The broadcast channels of each app and environment: one hash per app and environment,
/// `pf:{<app>}:channels:<environment>`, channel id → `<policy>:<created-at>`, in the app's own
/// slot. APNs is the authority on which channels exist; this is what PushFleet created there,
/// so a job can name a channel and be sent with its storage policy, and the 10,000 limit can be
/// checked before Apple is asked.
package final class ChannelStore: Sendable {
    let client: any RedisCommands

    package init(client: any RedisCommands) {
        self.client = client
    }

    /// Adds a channel unless the app already holds `limit` channels in the environment (a
    /// channel already stored is replaced whatever the count).
    ///
    /// - Returns: whether it was stored.
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func add(app: String, environment: APNsEnvironment, _ record: ChannelRecord, limit: Int = APNsChannel.maxPerApp) async throws -> Bool {
        try StoreValidation.app(app)
        let reply = try await client.runScript(
            Self.addScript, keys: [.string(Self.key(app: app, environment: environment))],
            arguments: [.string(record.id.rawValue), .string(record.storedValue), .integer(limit)])
        guard let stored = reply.int else { throw StoreError.unexpected(reply, from: "the add-channel script") }
        return stored == 1
    }

    /// Removes a channel; `false` when it was not stored.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    @discardableResult
    package func remove(app: String, environment: APNsEnvironment, id: APNsChannelID) async throws -> Bool {
        try StoreValidation.app(app)
        let reply = try await client.send("HDEL", .string(Self.key(app: app, environment: environment)), .string(id.rawValue))
        return reply.int == 1
    }

    /// One channel, or `nil` when it is not stored.
    ///
    /// - Throws: ``StoreError`` naming `app`, or `unexpectedReply` for a value no version of
    ///   PushFleet writes; `RedisClientError`.
    package func channel(app: String, environment: APNsEnvironment, id: APNsChannelID) async throws -> ChannelRecord? {
        try StoreValidation.app(app)
        let reply = try await client.send("HGET", .string(Self.key(app: app, environment: environment)), .string(id.rawValue))
        if reply.isNull { return nil }
        guard let value = reply.string, let record = ChannelRecord(id: id.rawValue, storedValue: value) else {
            throw StoreError.unexpected(reply, from: "HGET of channel \(id) of app \(app)")
        }
        return record
    }

    /// Every channel of the app in the environment, oldest first (at most 10,000).
    ///
    /// - Throws: ``StoreError`` naming `app`, or `unexpectedReply`; `RedisClientError`.
    package func channels(app: String, environment: APNsEnvironment) async throws -> [ChannelRecord] {
        try StoreValidation.app(app)
        let reply = try await client.send("HGETALL", .string(Self.key(app: app, environment: environment)))
        guard let items = reply.array, items.count.isMultiple(of: 2) else {
            throw StoreError.unexpected(reply, from: "HGETALL of the channels of app \(app)")
        }
        var records: [ChannelRecord] = []
        records.reserveCapacity(items.count / 2)
        for index in stride(from: 0, to: items.count, by: 2) {
            guard let id = items[index].string, let value = items[index + 1].string,
                let record = ChannelRecord(id: id, storedValue: value)
            else { throw StoreError.unexpected(reply, from: "HGETALL of the channels of app \(app)") }
            records.append(record)
        }
        return records.sorted { ($0.createdAt, $0.id.rawValue) < ($1.createdAt, $1.id.rawValue) }
    }

    /// How many channels the app holds in the environment.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func count(app: String, environment: APNsEnvironment) async throws -> Int {
        try StoreValidation.app(app)
        let reply = try await client.send("HLEN", .string(Self.key(app: app, environment: environment)))
        guard let count = reply.int else { throw StoreError.unexpected(reply, from: "HLEN of the channels of app \(app)") }
        return Int(count)
    }

    /// `pf:{<app>}:channels:<environment>`
    static func key(app: String, environment: APNsEnvironment) -> String {
        "pf:{\(app)}:channels:\(environment.rawValue)"
    }

    /// KEYS: the channels hash. ARGV: channel id, value, limit. Returns 1 when stored, 0 when
    /// the hash is full.
    static let addScript = RedisScript(
        """
        if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then
          return 0
        end
        redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
        return 1
        """
    )
}
