import APNsCore
import Redis

/// One notification of an online-only job for one device: the job and the device's position
/// in it. Its ``id`` (`<job>:<position>`) is the message id the online channel carries and the
/// app acknowledges.
package struct InboxMessage: Sendable, Hashable, CustomStringConvertible {
    package var jobID: String
    package var position: UInt32

    package init(jobID: String, position: UInt32) {
        self.jobID = jobID
        self.position = position
    }

    /// `<job>:<position>`.
    package var id: String { "\(jobID):\(position)" }

    /// The message an id names; `nil` for one PushFleet did not write.
    package init?(id: String) {
        guard let colon = id.lastIndex(of: ":"), colon != id.startIndex,
            let position = UInt32(id[id.index(after: colon)...])
        else { return nil }
        self.init(jobID: String(id[..<colon]), position: position)
    }

    package var description: String { id }
}

/// A message waiting in a device's inbox, with when it expires (ms since 1970).
package struct InboxEntry: Sendable, Hashable {
    package var message: InboxMessage
    package var expiresAt: Int64

    package init(message: InboxMessage, expiresAt: Int64) {
        self.message = message
        self.expiresAt = expiresAt
    }
}

/// The keys of the inboxes, in the presence buckets' slots `{ib:<app>:<bucket>}`: a sorted set
/// per device, message ids scored by their expiry (ms), the key expiring with its last entry.
/// A chunk of 1,000 devices is written with one script per bucket (64 at most, pipelined).
struct InboxKeyspace: Sendable {
    /// `pf:{ib:<app>:<bucket>}:<token hex>`
    static func key(app: String, token: DeviceToken) -> String {
        "pf:{ib:\(app):\(PresenceKeyspace.bucket(of: token))}:\(token.hex)"
    }
}

/// The inboxes of online-only jobs: each device's messages not acknowledged yet, bounded and
/// expiring. The send stage keeps a message for every device of a chunk before anything is
/// delivered (``keep(app:_:capacity:)``), so a device that is offline, or whose connection or
/// gateway is lost, still has it; a gateway replays a device's inbox when it connects
/// (``pending(app:token:)``) and removes what the app acknowledged (``remove(app:_:)``).
package final class InboxStore: Sendable {
    let client: any RedisCommands
    private let clock: @Sendable () -> Int64

    /// - Parameter clock: the time in ms since 1970; tests pass a clock they move by hand.
    package init(client: any RedisCommands, clock: @escaping @Sendable () -> Int64 = StoreClock.system) {
        self.client = client
        self.clock = clock
    }

    /// KEYS: inboxes of one slot. ARGV: now (ms), the capacity, then an id and its expiry per
    /// key. Drops expired entries, adds (or re-dates) the message, drops those over the capacity
    /// nearest to their expiry, and makes the key expire with its last entry. Answers how many
    /// entries were dropped over the capacity.
    static let keepScript = RedisScript(
        """
        local now, capacity = ARGV[1], tonumber(ARGV[2])
        local dropped = 0
        for i, key in ipairs(KEYS) do
          redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
          redis.call('ZADD', key, ARGV[2 + 2 * i], ARGV[1 + 2 * i])
          local over = redis.call('ZCARD', key) - capacity
          if over > 0 then
            redis.call('ZPOPMIN', key, over)
            dropped = dropped + over
          end
          local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
          if last[2] then redis.call('PEXPIREAT', key, last[2]) end
        end
        return dropped
        """)

    /// KEYS: inboxes of one slot. ARGV: an id per key. Answers 1 for each id that was there.
    static let removeScript = RedisScript(
        """
        local removed = {}
        for i, key in ipairs(KEYS) do removed[i] = redis.call('ZREM', key, ARGV[i]) end
        return removed
        """)

    /// Keeps `messages` (one per device) until `expiresAt` (ms since 1970), at most `capacity`
    /// per device: one script per presence bucket, pipelined. Idempotent: keeping a message
    /// again re-dates it.
    ///
    /// - Returns: how many older entries were dropped to stay within `capacity`.
    /// - Throws: ``StoreError`` naming `app` or a job id; `RedisClientError`.
    @discardableResult
    package func keep(app: String, _ messages: [(token: DeviceToken, message: InboxMessage)], expiresAt: Int64, capacity: Int) async throws -> Int {
        try StoreValidation.app(app)
        precondition(capacity >= 1, "an inbox holds at least one message")
        for (index, item) in messages.enumerated() {
            try StoreValidation.jobID(item.message.jobID, field: "messages[\(index)].jobID")
        }
        let now = clock()
        guard !messages.isEmpty, expiresAt > now else { return 0 }
        let groups = Self.byBucket(messages.map(\.token))
        let replies = try await client.runScripts(
            groups.map { indexes in
                RedisScriptCall(
                    Self.keepScript, keys: indexes.map { .string(InboxKeyspace.key(app: app, token: messages[$0].token)) },
                    arguments: [.string(String(now)), .integer(capacity)]
                        + indexes.flatMap { [RedisArgument.string(messages[$0].message.id), .string(String(expiresAt))] })
            })
        var dropped = 0
        for reply in replies {
            guard let count = reply.int else { throw StoreError.unexpected(reply, from: "the inbox keep script") }
            dropped += Int(count)
        }
        return dropped
    }

    /// The messages waiting in `token`'s inbox, not expired, soonest to expire first.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func pending(app: String, token: DeviceToken) async throws -> [InboxEntry] {
        try StoreValidation.app(app)
        let reply = try await client.send(
            "ZRANGEBYSCORE", .string(InboxKeyspace.key(app: app, token: token)), .string("(\(clock())"), "+inf", "WITHSCORES")
        guard let items = reply.array, items.count.isMultiple(of: 2) else {
            throw StoreError.unexpected(reply, from: "ZRANGEBYSCORE of an inbox")
        }
        return stride(from: 0, to: items.count, by: 2).compactMap { index in
            guard let id = items[index].string, let message = InboxMessage(id: id),
                let score = items[index + 1].string.flatMap(Double.init)
            else { return nil }
            return InboxEntry(message: message, expiresAt: Int64(score))
        }
    }

    /// Removes each of `messages` from its device's inbox: one script per presence bucket,
    /// pipelined. Answers, per message, whether it was there (the first removal of an
    /// acknowledged message is the one that counts it).
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func remove(app: String, _ messages: [(token: DeviceToken, message: InboxMessage)]) async throws -> [Bool] {
        try StoreValidation.app(app)
        guard !messages.isEmpty else { return [] }
        let groups = Self.byBucket(messages.map(\.token))
        let replies = try await client.runScripts(
            groups.map { indexes in
                RedisScriptCall(
                    Self.removeScript, keys: indexes.map { .string(InboxKeyspace.key(app: app, token: messages[$0].token)) },
                    arguments: indexes.map { .string(messages[$0].message.id) })
            })
        var removed = Array(repeating: false, count: messages.count)
        for (indexes, reply) in zip(groups, replies) {
            guard let flags = reply.array?.compactMap(\.int), flags.count == indexes.count else {
                throw StoreError.unexpected(reply, from: "the inbox remove script")
            }
            for (index, flag) in zip(indexes, flags) { removed[index] = flag == 1 }
        }
        return removed
    }

    /// Indexes of `tokens` grouped by presence bucket, in the order buckets first appear.
    private static func byBucket(_ tokens: [DeviceToken]) -> [[Int]] {
        var groups: [Int: Int] = [:]
        var result: [[Int]] = []
        for (index, token) in tokens.enumerated() {
            let bucket = PresenceKeyspace.bucket(of: token)
            if let group = groups[bucket] {
                result[group].append(index)
            } else {
                groups[bucket] = result.count
                result.append([index])
            }
        }
        return result
    }
}
