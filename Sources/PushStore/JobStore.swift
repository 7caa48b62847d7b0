import APNsCore
import Redis

/// The per-job state of the send pipeline in Redis: the job's spec (its JSON), its statistics
/// (named integer counters) and a sent marker per token that reached a final outcome.
///
/// All of it lives in the job's hash slot `{job:<jobID>}`, so ``recordOutcomes(jobID:_:)`` adds
/// markers and counts them in one script: a token is counted once however many workers, retries
/// or redeliveries report it. Every key expires ``specTimeToLive`` after it was written last
/// (the spec after it was saved), so a finished job's state disappears on its own.
///
/// The counters are ``JobCounter``s: `chunks` and `expanded` (``recordChunk(jobID:chunkID:tokenCount:)``),
/// the expansion's and the feedback worker's (``increment(jobID:_:)`` and ``set(jobID:_:)``),
/// `sent` and one counter per final outcome (``recordOutcomes(jobID:_:)``). The job's control
/// state (paused, cancelled, its rate) is apart from them (``JobControl``).
public final class JobStore: Sendable {
    /// How long a job's keys live after their last write.
    public let specTimeToLive: Duration
    let client: any RedisCommands
    private let timeToLiveMilliseconds: Int64

    /// Creates a store over `client`.
    ///
    /// - Parameter specTimeToLive: the TTL of every key of a job (at least 1 ms); default 7 days.
    public init(client: any RedisCommands, specTimeToLive: Duration = .seconds(7 * 24 * 3600)) {
        precondition(specTimeToLive >= .milliseconds(1), "specTimeToLive must be at least 1 ms")
        self.client = client
        self.specTimeToLive = specTimeToLive
        self.timeToLiveMilliseconds = specTimeToLive.wholeMilliseconds
    }

    // MARK: - Spec

    /// Stores the job's JSON once (`SET NX` with the TTL); an existing spec is kept.
    ///
    /// - Returns: whether it was stored now.
    /// - Throws: ``DeviceRegistryError`` naming `jobID`; `RedisClientError`.
    @discardableResult
    public func saveSpec(jobID: String, json: [UInt8]) async throws -> Bool {
        try RegistryValidation.jobID(jobID)
        let reply = try await client.send(
            "SET", .string(JobKeyspace(jobID: jobID).spec), .bytes(json), "NX", "PX", .integer(Int(timeToLiveMilliseconds))
        )
        return !reply.isNull
    }

    /// The stored JSON, or nil.
    ///
    /// - Throws: ``DeviceRegistryError`` naming `jobID`; `RedisClientError`.
    public func spec(jobID: String) async throws -> [UInt8]? {
        try RegistryValidation.jobID(jobID)
        let reply = try await client.send("GET", .string(JobKeyspace(jobID: jobID).spec))
        if reply.isNull {
            return nil
        }
        guard let bytes = reply.bytes else {
            throw DeviceRegistry.unexpected(reply, from: "GET of job \(jobID)'s spec")
        }
        return bytes
    }

    // MARK: - Counters

    /// Records that chunk `chunkID` of `tokenCount` tokens was published: idempotent per chunk
    /// id (`HSETNX` on the chunks hash); only the first call adds to the counters `chunks` (+1)
    /// and `expanded` (+`tokenCount`).
    ///
    /// - Returns: whether it was new.
    /// - Throws: ``DeviceRegistryError`` naming `jobID`, `chunkID` or `tokenCount`;
    ///   `RedisClientError`.
    @discardableResult
    public func recordChunk(jobID: String, chunkID: String, tokenCount: Int) async throws -> Bool {
        try RegistryValidation.jobID(jobID)
        try RegistryValidation.name(chunkID, field: "chunkID", what: "chunk id")
        try RegistryValidation.atLeast(0, tokenCount, field: "tokenCount")
        let keys = JobKeyspace(jobID: jobID)
        let reply = try await client.runScript(
            JobScripts.recordChunk,
            keys: [.string(keys.chunks), .string(keys.stats)],
            arguments: [.string(chunkID), .integer(tokenCount), .string(String(timeToLiveMilliseconds))]
        )
        guard let new = reply.int else {
            throw DeviceRegistry.unexpected(reply, from: "the record-chunk script")
        }
        return new == 1
    }

    /// Adds to counters unconditionally (e.g. ``JobCounter/targeted``, ``JobCounter/removed``,
    /// outcomes of the resend path), in one script. Zero values are skipped; an empty
    /// dictionary does nothing. Negative values subtract.
    ///
    /// - Throws: ``DeviceRegistryError`` naming `jobID` or `counters`; `RedisClientError`.
    public func increment(jobID: String, _ counters: [JobCounter: Int]) async throws {
        try await writeCounters(JobScripts.increment, jobID: jobID, counters.filter { $0.value != 0 })
    }

    /// Sets counters (`HSET`), e.g. ``JobCounter/expansionComplete`` = 1, in one script.
    ///
    /// - Throws: ``DeviceRegistryError`` naming `jobID` or `counters`; `RedisClientError`.
    public func set(jobID: String, _ counters: [JobCounter: Int]) async throws {
        try await writeCounters(JobScripts.set, jobID: jobID, counters)
    }

    /// All counters of the job (`HGETALL`) by field name (see ``JobCounter/init(name:)``),
    /// empty when unknown.
    ///
    /// - Throws: ``DeviceRegistryError`` naming `jobID`, or `unexpectedReply` when a counter is
    ///   not an integer; `RedisClientError`.
    public func statistics(jobID: String) async throws -> [String: Int] {
        try RegistryValidation.jobID(jobID)
        let what = "HGETALL of job \(jobID)'s statistics"
        var counters: [String: Int] = [:]
        for (name, value) in try await hashFields(JobKeyspace(jobID: jobID).stats, what: what) {
            guard let number = Int(value) else { throw DeviceRegistryError(.unexpectedReply, field: nil, message: "\(what): \(name) is not an integer") }
            counters[name] = number
        }
        return counters
    }

    /// Every field of a hash (`HGETALL`) as text.
    func hashFields(_ key: String, what: String) async throws -> [String: String] {
        let reply = try await client.send("HGETALL", .string(key))
        guard let fields = reply.array, fields.count.isMultiple(of: 2) else {
            throw DeviceRegistry.unexpected(reply, from: what)
        }
        var values: [String: String] = [:]
        for index in stride(from: 0, to: fields.count, by: 2) {
            guard let name = fields[index].string, let value = fields[index + 1].string else {
                throw DeviceRegistry.unexpected(reply, from: what)
            }
            values[name] = value
        }
        return values
    }

    // MARK: - Sent markers

    /// For each token, whether it already has a sent marker (`SMISMEMBER`), in order.
    ///
    /// - Throws: ``DeviceRegistryError`` naming `jobID`; `RedisClientError`.
    public func hasMarkers(jobID: String, tokens: [DeviceToken]) async throws -> [Bool] {
        try RegistryValidation.jobID(jobID)
        guard !tokens.isEmpty else { return [] }
        let key = RedisArgument.string(JobKeyspace(jobID: jobID).sent)
        let commands = stride(from: 0, to: tokens.count, by: Self.batchSize).map { start -> [RedisArgument] in
            ["SMISMEMBER", key] + tokens[start..<min(start + Self.batchSize, tokens.count)].map { .bytes($0.markerBytes) }
        }
        var answers: [Bool] = []
        answers.reserveCapacity(tokens.count)
        for reply in try await client.checkedPipeline(commands) {
            guard let flags = reply.array else {
                throw DeviceRegistry.unexpected(reply, from: "SMISMEMBER")
            }
            for flag in flags {
                guard let value = flag.int else {
                    throw DeviceRegistry.unexpected(reply, from: "SMISMEMBER")
                }
                answers.append(value == 1)
            }
        }
        guard answers.count == tokens.count else {
            throw DeviceRegistryError(
                .unexpectedReply,
                field: nil,
                message: "SMISMEMBER answered \(answers.count) flags for \(tokens.count) tokens"
            )
        }
        return answers
    }

    /// Records final outcomes: for each (token, counter) adds the token's sent marker and, only
    /// if the marker is new, increments `counter` (and also `sent` when the outcome
    /// ``DeliveryOutcomeRecord/countsAsSent``). Atomic per call: one `EVALSHA`, however many
    /// outcomes. Outcomes with the same token in one call: the first wins.
    ///
    /// - Returns: how many markers were new.
    /// - Throws: ``DeviceRegistryError`` naming `jobID` or `outcomes[i].counter`; `RedisClientError`.
    @discardableResult
    public func recordOutcomes(jobID: String, _ outcomes: [DeliveryOutcomeRecord]) async throws -> Int {
        try RegistryValidation.jobID(jobID)
        for (index, outcome) in outcomes.enumerated() {
            try RegistryValidation.name(outcome.counter.name, field: "outcomes[\(index)].counter", what: "counter")
        }
        guard !outcomes.isEmpty else { return 0 }
        let keys = JobKeyspace(jobID: jobID)
        var arguments: [RedisArgument] = [.string(String(timeToLiveMilliseconds))]
        arguments.reserveCapacity(1 + 3 * outcomes.count)
        for outcome in outcomes {
            arguments.append(.bytes(outcome.token.markerBytes))
            arguments.append(.string(outcome.counter.name))
            arguments.append(outcome.countsAsSent ? "1" : "0")
        }
        let reply = try await client.runScript(
            JobScripts.recordOutcomes,
            keys: [.string(keys.sent), .string(keys.stats)],
            arguments: arguments
        )
        guard let new = reply.int else {
            throw DeviceRegistry.unexpected(reply, from: "the record-outcomes script")
        }
        return Int(new)
    }

    // MARK: - Internals

    /// Tokens per `SMISMEMBER` of ``hasMarkers(jobID:tokens:)`` (all sent in one pipeline).
    static let batchSize = 1_000

    private func writeCounters(_ script: RedisScript, jobID: String, _ counters: [JobCounter: Int]) async throws {
        try RegistryValidation.jobID(jobID)
        let values = counters.map { (name: $0.key.name, value: $0.value) }.sorted { $0.name < $1.name }
        for (name, _) in values {
            try RegistryValidation.name(name, field: "counters", what: "counter")
        }
        guard !values.isEmpty else { return }
        var arguments: [RedisArgument] = [.string(String(timeToLiveMilliseconds))]
        for (name, value) in values {
            arguments.append(.string(name))
            arguments.append(.integer(value))
        }
        _ = try await client.runScript(script, keys: [.string(JobKeyspace(jobID: jobID).stats)], arguments: arguments)
    }
}
