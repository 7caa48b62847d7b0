import FlowControl
import Redis

/// Chunks of jobs sent at each device's own time (`send-at` as an object) waiting in Redis for
/// their slot, a quarter of an hour: one LIST per job, task and slot,
/// `pf:{park:<jobID>:<task>}:<slot>`, each element a chunk's Kafka key and value; and a leased
/// queue of the lists by slot time (`pf:{parked}:due`, `pf:{parked}:lists`, like the job
/// schedule's) that workers claim when the slot comes.
///
/// A list is entered in the queue before its first chunk is pushed, so a list is never pushed
/// and forgotten. Its chunks are taken off its head once published (``drop(_:from:)``), so a
/// worker that dies after claiming a list leaves it due again when its lease ends, with the
/// chunks it had not yet taken off (published again; the send stage's markers skip what was
/// sent).
package final class ParkedChunks: Sendable {
    /// One job's chunks of one task and slot.
    package struct List: Hashable, Sendable {
        package var jobID: String
        /// The expansion task that parked them (a shard task, or the list's prefix).
        package var task: String
        /// The slot's start, ms since 1970.
        package var slot: Int64

        package init(jobID: String, task: String, slot: Int64) {
            self.jobID = jobID
            self.task = task
            self.slot = slot
        }

        /// `pf:{park:<jobID>:<task>}:<slot>`
        var key: String { "pf:{park:\(jobID):\(task)}:\(slot)" }
        /// The queue's value: what names the list again.
        var entry: String { "\(jobID)\n\(task)\n\(slot)" }

        init?(entry: String) {
            let parts = entry.split(separator: "\n", omittingEmptySubsequences: false)
            guard parts.count == 3, let slot = Int64(parts[2]) else { return nil }
            self.init(jobID: String(parts[0]), task: String(parts[1]), slot: slot)
        }
    }

    /// A parked chunk: its Kafka key and value, and how many tokens it carries.
    package struct Chunk: Hashable, Sendable {
        package var key: [UInt8]
        package var value: [UInt8]
        package var tokenCount: Int

        package init(key: [UInt8], value: [UInt8], tokenCount: Int) {
            self.key = key
            self.value = value
            self.tokenCount = tokenCount
        }

        /// Key length (2 bytes), token count (4 bytes), both big-endian, the key, the value.
        var encoded: [UInt8] {
            let length = UInt16(key.count)
            let count = UInt32(tokenCount)
            return [
                UInt8(length >> 8), UInt8(length & 0xFF), UInt8(count >> 24), UInt8((count >> 16) & 0xFF), UInt8((count >> 8) & 0xFF),
                UInt8(count & 0xFF),
            ]
                + key + value
        }

        init?(encoded bytes: [UInt8]) {
            guard bytes.count >= 6 else { return nil }
            let length = Int(bytes[0]) << 8 | Int(bytes[1])
            let count = Int(bytes[2]) << 24 | Int(bytes[3]) << 16 | Int(bytes[4]) << 8 | Int(bytes[5])
            guard bytes.count >= 6 + length else { return nil }
            self.init(key: Array(bytes[6..<(6 + length)]), value: Array(bytes[(6 + length)...]), tokenCount: count)
        }
    }

    static let due = "pf:{parked}:due"
    static let lists = "pf:{parked}:lists"
    /// How long a list is kept after its slot, should no worker release it.
    package static let keptAfterSlot: Int64 = 7 * 86_400_000

    package let lease: Duration
    let client: any RedisCommands
    private let clock: @Sendable () -> Int64

    package init(client: any RedisCommands, lease: Duration = .seconds(60), clock: @escaping @Sendable () -> Int64 = StoreClock.system) {
        self.client = client
        self.lease = lease
        self.clock = clock
    }

    /// Parks chunks in `list`: its queue entry (due at the slot), then the chunks.
    ///
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    package func park(_ chunks: [Chunk], in list: List) async throws {
        try StoreValidation.jobID(list.jobID)
        guard !chunks.isEmpty else { return }
        _ = try await client.runScript(
            JobScripts.schedule, keys: [.string(Self.due), .string(Self.lists)],
            arguments: [.string(list.key), .string(String(list.slot)), .string(list.entry)])
        _ = try await client.checkedPipeline([
            ["RPUSH", .string(list.key)] + chunks.map { .bytes($0.encoded) },
            // Relative to this worker's clock (which tests move), not to Redis's.
            ["PEXPIRE", .string(list.key), .integer(Int(max(list.slot - clock(), 0) + Self.keptAfterSlot))],
        ])
    }

    /// Claims up to `limit` lists whose slot has come (moving them a lease ahead, so that a
    /// worker that dies loses nothing), earliest first.
    package func claimDue(limit: Int) async throws -> [List] {
        guard limit > 0 else { return [] }
        let now = clock()
        let reply = try await client.runScript(
            LeasedQueueScripts.claimDue, keys: [.string(Self.due), .string(Self.lists)],
            arguments: [.string(String(now)), .string(String(now + lease.wholeMilliseconds)), .integer(limit)])
        guard let fields = reply.array, fields.count.isMultiple(of: 2) else {
            throw StoreError.unexpected(reply, from: "the claim-parked script")
        }
        return try stride(from: 0, to: fields.count, by: 2).map { index in
            guard let entry = fields[index + 1].string, let list = List(entry: entry) else {
                throw StoreError.unexpected(reply, from: "the claim-parked script")
            }
            return list
        }
    }

    /// Makes a claimed list due again at `now + delay` rather than when its lease ends: for a
    /// list whose job is still expanding, released soon after the expansion completes.
    package func postpone(_ list: List, by delay: Duration) async throws {
        _ = try await client.runScript(
            JobScripts.schedule, keys: [.string(Self.due), .string(Self.lists)],
            arguments: [.string(list.key), .string(String(clock() + delay.wholeMilliseconds)), .string(list.entry)])
    }

    /// Up to `count` chunks from the head of `list`: the oldest parked.
    package func chunks(of list: List, count: Int) async throws -> [Chunk] {
        let reply = try await client.send("LRANGE", .string(list.key), .integer(0), .integer(count - 1))
        guard let items = reply.array else { throw StoreError.unexpected(reply, from: "LRANGE of parked chunks") }
        return try items.map { item in
            guard let bytes = item.bytes, let chunk = Chunk(encoded: bytes) else {
                throw StoreError.unexpected(item, from: "LRANGE of parked chunks")
            }
            return chunk
        }
    }

    /// Takes the first `count` chunks off `list`, once they were published: chunks parked
    /// meanwhile are appended at its tail and stay.
    package func drop(_ count: Int, from list: List) async throws {
        _ = try await client.send("LTRIM", .string(list.key), .integer(count), .integer(-1))
    }

    /// Forgets a list's queue entry once its chunks were all published.
    package func release(_ list: List) async throws {
        _ = try await client.runScript(
            LeasedQueueScripts.remove, keys: [.string(Self.due), .string(Self.lists)], arguments: [.string(list.key)])
    }

    /// Lists waiting (due, leased or in the future).
    package func count() async throws -> Int {
        let reply = try await client.send("ZCARD", .string(Self.due))
        guard let count = reply.int else { throw StoreError.unexpected(reply, from: "ZCARD") }
        return Int(count)
    }
}
