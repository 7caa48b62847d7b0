import APNsCore
import FlowControl
import Redis

/// The per-job state of the send pipeline in Redis: the job's spec (its JSON), its statistics
/// (named integer counters) and a sent marker per position that reached a final outcome.
///
/// A token's position is its device id (broadcasts, tags, openids) or its index in a token
/// job's list. The sent markers are bits, in ranges of 65,536 positions, each range in its own
/// hash slot with the outcome counters of its positions (``SentRangeKeyspace``), so
/// ``recordOutcomes(jobID:_:)`` sets markers and counts them in one script per range: a token
/// is counted once however many workers, retries or redeliveries report it, and a job's sent
/// state takes about one bit per position, spread over the cluster. Every key expires
/// ``specTimeToLive`` after it was written last (the spec after it was saved), so a finished
/// job's state disappears on its own.
///
/// The counters are ``JobCounter``s: `chunks` and `expanded` (``recordChunk(jobID:chunkID:tokenCount:)``),
/// the expansion's and the feedback worker's (``increment(jobID:_:)`` and ``set(jobID:_:)``),
/// `sent` and one counter per final outcome (``recordOutcomes(jobID:_:)``). The job's control
/// state (paused, cancelled, its rate) is apart from them (``JobControl``).
public final class JobStore: Sendable {
    /// How long a job's keys live after their last write.
    package let specTimeToLive: Duration
    let client: any RedisCommands
    let timeToLiveMilliseconds: Int64
    /// Ranges this process has added to a job's `ranges` set ("<job>/<range>"), and when.
    private let knownRanges: RecentRefreshes

    /// Creates a store over `client`.
    ///
    /// - Parameter specTimeToLive: the TTL of every key of a job (at least 1 ms); default 7 days.
    public init(client: any RedisCommands, specTimeToLive: Duration = .seconds(7 * 24 * 3600)) {
        precondition(specTimeToLive >= .milliseconds(1), "specTimeToLive must be at least 1 ms")
        self.client = client
        self.specTimeToLive = specTimeToLive
        self.timeToLiveMilliseconds = specTimeToLive.wholeMilliseconds
        self.knownRanges = RecentRefreshes(timeToLive: specTimeToLive)
    }

    /// The jobs of each app, newest first (over the same client).
    package var index: JobIndex { JobIndex(client: client) }

    // MARK: - Spec

    /// Stores the job's JSON once (`SET NX` with the TTL); an existing spec is kept.
    ///
    /// - Returns: whether it was stored now.
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    @discardableResult
    package func saveSpec(jobID: String, json: [UInt8]) async throws -> Bool {
        try StoreValidation.jobID(jobID)
        let reply = try await client.send(
            "SET", .string(JobKeyspace(jobID: jobID).spec), .bytes(json), "NX", "PX", .integer(Int(timeToLiveMilliseconds))
        )
        return !reply.isNull
    }

    /// The stored JSON, or nil.
    ///
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    package func spec(jobID: String) async throws -> [UInt8]? {
        try StoreValidation.jobID(jobID)
        let reply = try await client.send("GET", .string(JobKeyspace(jobID: jobID).spec))
        if reply.isNull {
            return nil
        }
        guard let bytes = reply.bytes else {
            throw StoreError.unexpected(reply, from: "GET of job \(jobID)'s spec")
        }
        return bytes
    }

    // MARK: - Counters

    /// Records that chunk `chunkID` of `tokenCount` tokens was published: idempotent per chunk
    /// id (`HSETNX` on the chunks hash); only the first call adds to the counters `chunks` (+1)
    /// and `expanded` (+`tokenCount`).
    ///
    /// With `parkedFor`, the chunk waits for that slot (``JobCounter/timed(slot:)``), and the
    /// first call adds its tokens to that counter too.
    ///
    /// - Returns: whether it was new.
    /// - Throws: ``StoreError`` naming `jobID`, `chunkID` or `tokenCount`;
    ///   `RedisClientError`.
    @discardableResult
    package func recordChunk(jobID: String, chunkID: String, tokenCount: Int, parkedFor slot: Int64? = nil) async throws -> Bool {
        try StoreValidation.jobID(jobID)
        try StoreValidation.name(chunkID, field: "chunkID", what: "chunk id")
        try StoreValidation.atLeast(0, tokenCount, field: "tokenCount")
        let keys = JobKeyspace(jobID: jobID)
        let reply = try await client.runScript(
            JobScripts.recordChunk,
            keys: [.string(keys.chunks), .string(keys.stats)],
            arguments: [.string(chunkID), .integer(tokenCount), .string(String(timeToLiveMilliseconds))]
                + (slot.map { [.string(JobCounter.timed(slot: $0).name)] } ?? [])
        )
        guard let new = reply.int else {
            throw StoreError.unexpected(reply, from: "the record-chunk script")
        }
        return new == 1
    }

    /// Which of `chunkIDs` were recorded already (``recordChunk(jobID:chunkID:tokenCount:parkedFor:)``):
    /// one `HMGET`. A job expanded again (resumed, or after a worker died) parks only the chunks
    /// it had not, so that each waits once.
    ///
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    package func recordedChunks(jobID: String, chunkIDs: [String]) async throws -> Set<String> {
        try StoreValidation.jobID(jobID)
        guard !chunkIDs.isEmpty else { return [] }
        let reply = try await client.send(["HMGET", .string(JobKeyspace(jobID: jobID).chunks)] + chunkIDs.map { .string($0) })
        guard let values = reply.array, values.count == chunkIDs.count else {
            throw StoreError.unexpected(reply, from: "HMGET of job \(jobID)'s chunks")
        }
        return Set(zip(chunkIDs, values).filter { $0.1 != .null }.map(\.0))
    }

    /// The tokens the expand stage has published for the job so far (``JobCounter/expanded``):
    /// one `HGET`, for following an expansion without reading the whole report; 0 when unknown.
    ///
    /// - Throws: ``StoreError`` naming `jobID`, or `unexpectedReply` when the counter is not an
    ///   integer; `RedisClientError`.
    package func expandedTokens(jobID: String) async throws -> Int {
        try StoreValidation.jobID(jobID)
        let reply = try await client.send("HGET", .string(JobKeyspace(jobID: jobID).stats), .string(JobCounter.expanded.name))
        if reply == .null { return 0 }
        guard let text = reply.string, let count = Int(text) else {
            throw StoreError.unexpected(reply, from: "HGET of job \(jobID)'s expanded counter")
        }
        return count
    }

    /// Adds to counters unconditionally (e.g. ``JobCounter/targeted``, ``JobCounter/removed``,
    /// outcomes of the resend path), in one script. Zero values are skipped; an empty
    /// dictionary does nothing. Negative values subtract.
    ///
    /// - Throws: ``StoreError`` naming `jobID` or `counters`; `RedisClientError`.
    package func increment(jobID: String, _ counters: [JobCounter: Int]) async throws {
        try await writeCounters(JobScripts.increment, jobID: jobID, counters.filter { $0.value != 0 })
    }

    /// Adds a resend tally's counts to its job, once per tally id however often and late it is
    /// applied (its completer, slowed by an outage, and resend drainers that found it left
    /// behind may all apply it): the ids applied are kept with the job's counters, one per
    /// completion (as the job's chunks are kept, one per chunk).
    ///
    /// - Returns: whether this call counted it.
    /// - Throws: ``StoreError`` naming `jobID`, `counters` or `id`; `RedisClientError`.
    @discardableResult
    package func apply(_ tally: ResendTally) async throws -> Bool {
        try StoreValidation.jobID(tally.jobID)
        try StoreValidation.name(tally.id, field: "id", what: "tally id")
        let pairs = try Self.counterArguments(tally.counters.filter { $0.value != 0 })
        let keys = JobKeyspace(jobID: tally.jobID)
        let reply = try await client.runScript(
            JobScripts.applyTally, keys: [.string(keys.stats), .string(keys.appliedTallies)],
            arguments: [.string(String(timeToLiveMilliseconds)), .string(tally.id)] + pairs)
        guard let counted = reply.int else { throw StoreError.unexpected(reply, from: "the apply-tally script of job \(tally.jobID)") }
        return counted == 1
    }

    /// Sets counters (`HSET`), e.g. ``JobCounter/expansionComplete`` = 1, in one script.
    ///
    /// - Throws: ``StoreError`` naming `jobID` or `counters`; `RedisClientError`.
    package func set(jobID: String, _ counters: [JobCounter: Int]) async throws {
        try await writeCounters(JobScripts.set, jobID: jobID, counters)
    }

    /// Sets `counter` to `value` unless it is set already, and returns what it holds then: the
    /// first caller's value, for every caller (a moment all of a job's tasks must agree on,
    /// ``JobCounter/timedFrom``). Calling it again is harmless.
    ///
    /// - Throws: ``StoreError`` naming `jobID` or `counters`, or `unexpectedReply`;
    ///   `RedisClientError`.
    package func setOnce(jobID: String, _ counter: JobCounter, to value: Int) async throws -> Int {
        try StoreValidation.jobID(jobID)
        try StoreValidation.name(counter.name, field: "counters", what: "counter")
        let reply = try await client.runScript(
            JobScripts.setOnce, keys: [.string(JobKeyspace(jobID: jobID).stats)],
            arguments: [.string(String(timeToLiveMilliseconds)), .string(counter.name), .integer(value)])
        guard let text = reply.string, let stored = Int(text) else {
            throw StoreError.unexpected(reply, from: "the set-once script of job \(jobID)")
        }
        return stored
    }

    /// All counters of the job by field name (see ``JobCounter/init(name:)``): its own, plus
    /// the outcome counters of every range of its sent state; empty when unknown.
    ///
    /// - Throws: ``StoreError`` naming `jobID`, or `unexpectedReply` when a counter is
    ///   not an integer; `RedisClientError`.
    package func statistics(jobID: String) async throws -> [String: Int] {
        try StoreValidation.jobID(jobID)
        let keys = JobKeyspace(jobID: jobID)
        let first = try await client.checkedPipeline([["HGETALL", .string(keys.stats)], ["SMEMBERS", .string(keys.ranges)]])
        guard let members = first[1].array else { throw StoreError.unexpected(first[1], from: "SMEMBERS of job \(jobID)'s ranges") }
        let ranges = try members.map { member -> Int in
            guard let text = member.string, let range = Int(text) else {
                throw StoreError.unexpected(first[1], from: "SMEMBERS of job \(jobID)'s ranges")
            }
            return range
        }
        var replies = [first[0]]
        replies += try await client.checkedPipeline(ranges.map { ["HGETALL", .string(SentRangeKeyspace(jobID: jobID, range: $0).stats)] })
        return try Self.counters(summing: replies, jobID: jobID)
    }

    /// The counters of the job's own hash alone: what its expansion and its control record
    /// (``JobCounter/expansionComplete``, the shards done, ``JobCounter/timedFrom``), without
    /// the outcome counters of its sent ranges, so one `HGETALL` however large the job; empty
    /// when unknown.
    ///
    /// - Throws: as ``statistics(jobID:)``.
    package func ownCounters(jobID: String) async throws -> [String: Int] {
        try StoreValidation.jobID(jobID)
        return try Self.counters(summing: [try await client.send("HGETALL", .string(JobKeyspace(jobID: jobID).stats))], jobID: jobID)
    }

    /// The integer fields of `HGETALL` replies, summed by name.
    private static func counters(summing replies: [RedisReply], jobID: String) throws -> [String: Int] {
        var counters: [String: Int] = [:]
        for reply in replies {
            let what = "HGETALL of job \(jobID)'s statistics"
            for (name, value) in try fields(of: reply, what: what) {
                guard let number = Int(value) else { throw StoreError(.unexpectedReply, field: nil, message: "\(what): \(name) is not an integer") }
                counters[name, default: 0] += number
            }
        }
        return counters
    }

    /// Every field of a hash (`HGETALL`) as text.
    func hashFields(_ key: String, what: String) async throws -> [String: String] {
        try Self.fields(of: try await client.send("HGETALL", .string(key)), what: what)
    }

    /// The fields of an `HGETALL` reply as text.
    static func fields(of reply: RedisReply, what: String) throws -> [String: String] {
        guard let fields = reply.array, fields.count.isMultiple(of: 2) else {
            throw StoreError.unexpected(reply, from: what)
        }
        var values: [String: String] = [:]
        for index in stride(from: 0, to: fields.count, by: 2) {
            guard let name = fields[index].string, let value = fields[index + 1].string else {
                throw StoreError.unexpected(reply, from: what)
            }
            values[name] = value
        }
        return values
    }

    // MARK: - Sent markers

    /// For each position, whether it already has a sent marker, in order (one `BITFIELD_RO`
    /// per range, pipelined).
    ///
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    package func hasMarkers(jobID: String, positions: [UInt32]) async throws -> [Bool] {
        try await bits(jobID: jobID, positions: positions, from: 0, what: "sent markers")
    }

    /// For each position, whether APNs accepted the job's notification to it, in order: the
    /// devices a recall of the job goes to. A position accepted has its sent marker and no
    /// refused bit (``JobScripts/recordOutcomes``). Two `BITFIELD_RO` per range, pipelined.
    ///
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    package func wasAccepted(jobID: String, positions: [UInt32]) async throws -> [Bool] {
        let markers = try await bits(jobID: jobID, positions: positions, from: 0, what: "sent markers")
        let refused = try await bits(jobID: jobID, positions: positions, from: SentRangeKeyspace.positions, what: "refused bits")
        return zip(markers, refused).map { $0 && !$1 }
    }

    /// The bits at `from` + each position's offset in its range's bitmap, in order.
    private func bits(jobID: String, positions: [UInt32], from base: Int, what: String) async throws -> [Bool] {
        try StoreValidation.jobID(jobID)
        guard !positions.isEmpty else { return [] }
        let byRange = Dictionary(grouping: positions.indices, by: { SentRangeKeyspace.range(of: positions[$0]) }).sorted { $0.key < $1.key }
        let commands = byRange.map { range, indexes -> [RedisArgument] in
            var command: [RedisArgument] = ["BITFIELD_RO", .string(SentRangeKeyspace(jobID: jobID, range: range).sent)]
            command.reserveCapacity(2 + 3 * indexes.count)
            for index in indexes {
                command += ["GET", "u1", .integer(base + SentRangeKeyspace.offset(of: positions[index]))]
            }
            return command
        }
        var answers = [Bool](repeating: false, count: positions.count)
        for ((_, indexes), reply) in zip(byRange, try await client.checkedPipeline(commands)) {
            guard let flags = reply.array, flags.count == indexes.count else {
                throw StoreError.unexpected(reply, from: "BITFIELD_RO of job \(jobID)'s \(what)")
            }
            for (index, flag) in zip(indexes, flags) {
                guard let value = flag.int else { throw StoreError.unexpected(reply, from: "BITFIELD_RO of job \(jobID)'s \(what)") }
                answers[index] = value == 1
            }
        }
        return answers
    }

    /// Records final outcomes: for each (position, counter) sets the position's sent marker
    /// and, only if the marker is new, increments `counter` (and also `sent` when the outcome
    /// ``DeliveryOutcomeRecord/countsAsSent``). Atomic per range of positions: one `EVALSHA`
    /// each, pipelined, after the job's set of ranges names them. Outcomes with the same
    /// position in one call: the first wins.
    ///
    /// - Returns: how many markers were new.
    /// - Throws: ``StoreError`` naming `jobID` or `outcomes[i].counter`; `RedisClientError`.
    @discardableResult
    package func recordOutcomes(jobID: String, _ outcomes: [DeliveryOutcomeRecord]) async throws -> Int {
        try StoreValidation.jobID(jobID)
        for (index, outcome) in outcomes.enumerated() {
            try StoreValidation.name(outcome.counter.name, field: "outcomes[\(index)].counter", what: "counter")
        }
        guard !outcomes.isEmpty else { return 0 }
        let byRange = Dictionary(grouping: outcomes, by: { SentRangeKeyspace.range(of: $0.position) }).sorted { $0.key < $1.key }
        try await addRanges(byRange.map(\.key), jobID: jobID)
        let ttl = String(timeToLiveMilliseconds)
        let calls = byRange.map { range, records in
            let keys = SentRangeKeyspace(jobID: jobID, range: range)
            var arguments: [RedisArgument] = [.string(ttl)]
            arguments.reserveCapacity(1 + 3 * records.count)
            for record in records {
                arguments.append(.integer(SentRangeKeyspace.offset(of: record.position)))
                arguments.append(.string(record.counter.name))
                arguments.append(record.counter == .accepted ? "2" : record.countsAsSent ? "1" : "0")
            }
            return RedisScriptCall(JobScripts.recordOutcomes, keys: [.string(keys.sent), .string(keys.stats)], arguments: arguments)
        }
        var new = 0
        for reply in try await client.runScripts(calls) {
            guard let count = reply.int else {
                throw StoreError.unexpected(reply, from: "the record-outcomes script")
            }
            new += Int(count)
        }
        return new
    }

    /// Adds `ranges` to the job's set of ranges (before anything is written to them, so the
    /// statistics always find them) and refreshes its TTL, skipping those this process added
    /// lately (``RecentRefreshes``: so the set lives at least three quarters of the time to live
    /// past the last write to any of its ranges).
    private func addRanges(_ ranges: [Int], jobID: String) async throws {
        let names = ranges.map { "\(jobID)/\($0)" }
        let now = ContinuousClock.now
        let due = knownRanges.due(names, at: now)
        let missing = zip(ranges, names).filter { due.contains($0.1) }
        guard !missing.isEmpty else { return }
        let key = RedisArgument.string(JobKeyspace(jobID: jobID).ranges)
        _ = try await client.checkedPipeline([
            ["SADD", key] + missing.map { .integer($0.0) },
            ["PEXPIRE", key, .integer(Int(timeToLiveMilliseconds))],
        ])
        knownRanges.record(missing.map(\.1), at: now)
    }

    // MARK: - Internals

    private func writeCounters(_ script: RedisScript, jobID: String, _ counters: [JobCounter: Int]) async throws {
        try StoreValidation.jobID(jobID)
        let pairs = try Self.counterArguments(counters)
        guard !pairs.isEmpty else { return }
        _ = try await client.runScript(
            script, keys: [.string(JobKeyspace(jobID: jobID).stats)], arguments: [.string(String(timeToLiveMilliseconds))] + pairs)
    }

    /// `counters` as script arguments, pairs of name and value sorted by name.
    ///
    /// - Throws: ``StoreError`` naming `counters` for a name a script cannot take.
    private static func counterArguments(_ counters: [JobCounter: Int]) throws -> [RedisArgument] {
        let values = counters.map { (name: $0.key.name, value: $0.value) }.sorted { $0.name < $1.name }
        var arguments: [RedisArgument] = []
        for (name, value) in values {
            try StoreValidation.name(name, field: "counters", what: "counter")
            arguments.append(.string(name))
            arguments.append(.integer(value))
        }
        return arguments
    }
}
