import APNsCore
import FlowControl
import Redis

/// Which gateway connection holds a device: what a presence record says.
package struct PresenceRecord: Sendable, Hashable, CustomStringConvertible {
    /// The gateway's id (`gateway.id`).
    package var gateway: String
    /// The connection's number on that gateway (each connection gets its own, from 1).
    package var connection: UInt64

    package init(gateway: String, connection: UInt64) {
        self.gateway = gateway
        self.connection = connection
    }

    /// `<gateway> <connection>`: a gateway id holds no space.
    var value: String { "\(gateway) \(connection)" }

    init?(value: String) {
        guard let space = value.lastIndex(of: " "), let connection = UInt64(value[value.index(after: space)...]) else { return nil }
        self.init(gateway: String(value[..<space]), connection: connection)
    }

    package var description: String { value }
}

/// One change of a device's presence, as a gateway sends them in batches.
package struct PresenceChange: Sendable, Hashable {
    package enum Kind: String, Sendable {
        /// The device connected: its record is this connection's, whatever it was (the newest
        /// connection wins).
        case claim = "c"
        /// A heartbeat: the lease is renewed, unless another connection claimed the device
        /// meanwhile (then the newer record stays).
        case refresh = "r"
        /// The connection ended: the record goes, unless it is another connection's by now.
        case release = "x"
    }

    package var kind: Kind
    package var app: String
    package var token: DeviceToken
    package var record: PresenceRecord

    package init(_ kind: Kind, app: String, token: DeviceToken, record: PresenceRecord) {
        self.kind = kind
        self.app = app
        self.token = token
        self.record = record
    }
}

/// The keys of one presence bucket of an app, in their own slot `{on:<app>:<bucket>}`: a
/// STRING per online device, expiring with its lease. 64 buckets: a chunk of 1,000 devices is
/// read with one `MGET` per bucket (64 at most, pipelined: one round trip per node), and the
/// app's connected devices still spread over 64 slots of a cluster. The bucket is the registry
/// bucket (``ShardKeyspace/bucketIndex(of:)``) modulo 64, independent of the registry's layout:
/// a reshard moves no presence.
struct PresenceKeyspace: Sendable {
    static let bucketCount = 64

    static func bucket(of token: DeviceToken) -> Int {
        ShardKeyspace.bucketIndex(of: token) % bucketCount
    }

    /// `pf:{on:<app>:<bucket>}:<token hex>`
    static func key(app: String, token: DeviceToken) -> String {
        "pf:{on:\(app):\(bucket(of: token))}:\(token.hex)"
    }
}

/// Presence: which gateway connection holds which device, in Redis, each record expiring with
/// its lease unless heartbeats renew it. Written by the gateways (``apply(_:lease:)``, in
/// batches), read per chunk by whoever routes deliveries (``lookup(app:tokens:)``).
///
/// A lost record only means "offline": a delivery then takes APNs. So presence is written
/// without waiting for replicas, and a gateway that dies leaves records that expire within a
/// lease.
package final class PresenceStore: Sendable {
    let client: any RedisCommands

    package init(client: any RedisCommands) {
        self.client = client
    }

    /// One script per slot: `ARGV[1]` the lease (ms), then a kind and a record value per key.
    static let applyScript = RedisScript(
        """
        local lease = ARGV[1]
        for i, key in ipairs(KEYS) do
          local kind, value = ARGV[2 * i], ARGV[2 * i + 1]
          if kind == 'c' then
            redis.call('SET', key, value, 'PX', lease)
          else
            local current = redis.call('GET', key)
            if kind == 'r' then
              if not current or current == value then redis.call('SET', key, value, 'PX', lease) end
            elseif current == value then
              redis.call('DEL', key)
            end
          end
        end
        return #KEYS
        """)

    /// Applies `changes` in their order (per device), one script call per app and bucket,
    /// pipelined. Claims and refreshes hold for `lease`.
    ///
    /// - Throws: ``StoreError`` for an invalid app id; `RedisClientError`.
    package func apply(_ changes: [PresenceChange], lease: Duration) async throws {
        guard !changes.isEmpty else { return }
        precondition(lease >= .milliseconds(1), "a presence lease is at least 1 ms")
        var calls: [String: (keys: [RedisArgument], arguments: [RedisArgument])] = [:]
        var order: [String] = []
        for change in changes {
            try StoreValidation.app(change.app)
            let slot = "\(change.app):\(PresenceKeyspace.bucket(of: change.token))"
            if calls[slot] == nil {
                calls[slot] = ([], [.integer(Int(lease.wholeMilliseconds))])
                order.append(slot)
            }
            calls[slot]!.keys.append(.string(PresenceKeyspace.key(app: change.app, token: change.token)))
            calls[slot]!.arguments += [.string(change.kind.rawValue), .string(change.record.value)]
        }
        _ = try await client.runScripts(
            order.map { slot in
                let call = calls[slot]!
                return RedisScriptCall(Self.applyScript, keys: call.keys, arguments: call.arguments)
            })
    }

    /// The records of those of `tokens` that are online in `app`: one `MGET` per bucket,
    /// pipelined. A device absent from the answer is offline.
    ///
    /// - Throws: ``StoreError`` for an invalid app id; `RedisClientError`.
    package func lookup(app: String, tokens: [DeviceToken]) async throws -> [DeviceToken: PresenceRecord] {
        try StoreValidation.app(app)
        guard !tokens.isEmpty else { return [:] }
        var buckets: [Int: [DeviceToken]] = [:]
        for token in tokens {
            buckets[PresenceKeyspace.bucket(of: token), default: []].append(token)
        }
        let groups = Array(buckets.values)
        let replies = try await client.checkedPipeline(
            groups.map { group in
                [.string("MGET")] + group.map { .string(PresenceKeyspace.key(app: app, token: $0)) }
            })
        var online: [DeviceToken: PresenceRecord] = [:]
        for (group, reply) in zip(groups, replies) {
            for (token, value) in zip(group, reply.array ?? []) {
                if let text = value.string, let record = PresenceRecord(value: text) {
                    online[token] = record
                }
            }
        }
        return online
    }

    // MARK: - Online counts

    /// The gateways' counts of an app's connected devices: `pf:{onc:<app>}`, a HASH of gateway id
    /// → `<devices> <at ms>`, expiring a minute after the last write. What the console's
    /// overview shows without reading every presence record.
    static func countsKey(app: String) -> String { "pf:{onc:\(app)}" }

    /// How long a gateway's count is believed: three missed writes of one a second.
    package static let countFreshness: Int64 = 5_000

    /// Records `gateway`'s count of connected devices for each app (one `HSET` each,
    /// pipelined); `at` ms since 1970.
    ///
    /// - Throws: ``StoreError`` for an invalid app id; `RedisClientError`.
    package func recordOnlineCounts(gateway: String, _ counts: [String: Int], at: Int64) async throws {
        guard !counts.isEmpty else { return }
        var commands: [[RedisArgument]] = []
        for (app, devices) in counts.sorted(by: { $0.key < $1.key }) {
            try StoreValidation.app(app)
            let key = Self.countsKey(app: app)
            commands.append(["HSET", .string(key), .string(gateway), .string("\(devices) \(at)")])
            commands.append(["PEXPIRE", .string(key), .integer(60_000)])
        }
        _ = try await client.checkedPipeline(commands)
    }

    /// The app's connected devices as the gateways counted them within ``countFreshness`` of
    /// `now` (ms since 1970), and how many gateways those counts came from.
    ///
    /// - Throws: ``StoreError`` for an invalid app id; `RedisClientError`.
    package func onlineCount(app: String, now: Int64) async throws -> (devices: Int, gateways: Int) {
        try StoreValidation.app(app)
        let reply = try await client.send("HGETALL", .string(Self.countsKey(app: app)))
        guard let items = reply.array, items.count.isMultiple(of: 2) else {
            throw StoreError.unexpected(reply, from: "HGETALL of the online counts")
        }
        var (devices, gateways) = (0, 0)
        for index in stride(from: 1, to: items.count, by: 2) {
            let parts = (items[index].string ?? "").split(separator: " ")
            guard parts.count == 2, let count = Int(parts[0]), let at = Int64(parts[1]), now - at <= Self.countFreshness else { continue }
            devices += count
            gateways += 1
        }
        return (devices, gateways)
    }
}
