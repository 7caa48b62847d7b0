import APNsCore
import FlowControl
import Foundation
import Redis

/// Notifications to send again after a transient failure, per app, in Redis: a sorted set of
/// entries by due time and a hash with each entry's attempts, first failure time and reason.
///
/// Entries outlive any worker: a worker ``claimDue(app:limit:)``s entries, which moves their due
/// time to the end of a lease (``ResendPolicy/lease``) instead of removing them. It then either
/// ``complete(app:jobID:_:counting:)``s them (final outcome) or ``schedule(app:_:)``s them again after another
/// failure; if it dies, the entries become due again when the lease ends and another worker
/// claims them. An entry is identified by its job id and token (`<jobID> <tokenhex>`), so a
/// token has at most one entry per job.
///
/// ``complete(app:jobID:_:counting:)`` removes by identity: an entry re-scheduled by another worker
/// since it was claimed (after a lease ran out) is removed too. Its outcome is counted by the
/// completion that removes it (``ResendTally``); the other worker's later completion sees
/// `false` and counts nothing.
package final class ResendBuffer: Sendable {
    /// When entries are due again and when they expire.
    package let policy: ResendPolicy
    let client: any RedisCommands
    private let clock: @Sendable () -> Int64
    private let random: @Sendable () -> Double

    /// Creates a buffer over `client`.
    ///
    /// - Parameters:
    ///   - clock: the time in milliseconds since 1970; tests pass a clock they move by hand.
    ///   - random: a number in `0..<1` for the jitter; tests pass a constant.
    package init(
        client: any RedisCommands,
        policy: ResendPolicy = ResendPolicy(),
        clock: @escaping @Sendable () -> Int64 = StoreClock.system,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.client = client
        self.policy = policy
        self.clock = clock
        self.random = random
    }

    /// Adds entries, or re-adds them after another failed attempt, with their due time: now +
    /// the policy's delay after `attempts` attempts, or now + `retryAfter` when that is later.
    ///
    /// Entries that reached ``ResendPolicy/maxAttempts`` or ``ResendPolicy/maxAge`` are not added
    /// (an existing entry for them is removed) and are returned, so the caller can dead-letter
    /// them. One script per call, in order: a token listed twice for a job ends as its last
    /// listing says.
    ///
    /// - Returns: the expired entries, in the order of `failures`.
    /// - Throws: ``StoreError`` naming `app`, `failures[i].jobID`, `failures[i].attempts`,
    ///   `failures[i].firstFailedAt` or `failures[i].retryAfter`; `RedisClientError`.
    package func schedule(app: String, _ failures: [ResendFailure]) async throws -> [ResendEntry] {
        try await schedule(app: app, failures, countingGivenUp: failures.map { _ in false }).expired
    }

    /// ``schedule(app:_:)``, and the given-up entries with `countingGivenUp[i]` end counted
    /// `dead-lettered` once: the script that removes them writes a ``ResendTally`` per job for
    /// those it found in the buffer (an entry another completion removed first counts nothing),
    /// which the caller applies to the job and forgets, as after
    /// ``complete(app:jobID:_:counting:)``. Resends given up are counted so; a first send given
    /// up at once has no entry and is counted by its own sent marker.
    ///
    /// - Throws: as ``schedule(app:_:)``, and ``StoreError`` naming `countingGivenUp` (not one flag
    ///   per failure).
    package func schedule(app: String, _ failures: [ResendFailure], countingGivenUp: [Bool]) async throws -> ResendScheduling {
        try StoreValidation.app(app)
        for (index, failure) in failures.enumerated() {
            try StoreValidation.jobID(failure.jobID, field: "failures[\(index)].jobID")
            try StoreValidation.atLeast(0, failure.attempts, field: "failures[\(index)].attempts")
            try StoreValidation.atLeast(0, failure.firstFailedAt, field: "failures[\(index)].firstFailedAt")
            if let retryAfter = failure.retryAfter, retryAfter < .zero {
                throw StoreError(
                    .invalidArgument,
                    field: "failures[\(index)].retryAfter",
                    message: "must not be negative, is \(retryAfter)"
                )
            }
        }
        guard countingGivenUp.count == failures.count else {
            throw StoreError(
                .invalidArgument, field: "countingGivenUp", message: "\(countingGivenUp.count) flags for \(failures.count) failures")
        }
        guard !failures.isEmpty else { return ResendScheduling() }
        let now = clock()
        var expired: [ResendEntry] = []
        // The jobs whose given-up entries count, each with the id of its tally.
        var tallied: [(jobID: String, id: String)] = []
        var counted: [String] = []
        var members: [RedisArgument] = []
        members.reserveCapacity(3 * failures.count)
        for (failure, counts) in zip(failures, countingGivenUp) {
            members.append(.string(ResendKeyspace.member(jobID: failure.jobID, token: failure.token)))
            if policy.isExpired(attempts: failure.attempts, firstFailedAt: failure.firstFailedAt, now: now) {
                expired.append(failure.entry)
                members.append("")
                guard counts else {
                    members.append("")
                    continue
                }
                counted.append(failure.jobID)
                if !tallied.contains(where: { $0.jobID == failure.jobID }) { tallied.append((failure.jobID, UUID().uuidString)) }
                members.append(.string(String(tallied.firstIndex { $0.jobID == failure.jobID }! + 1)))
            } else {
                members.append(.string(String(dueTime(of: failure, now: now))))
                members.append(
                    .string(ResendKeyspace.value(attempts: failure.attempts, firstFailedAt: failure.firstFailedAt, reason: failure.reason))
                )
            }
        }
        var arguments: [RedisArgument] = [
            .string(String(policy.retention.wholeMilliseconds)), .string(String(now)), .string(JobCounter.deadLettered.name),
            .integer(tallied.count),
        ]
        for job in tallied { arguments += [.string(job.jobID), .string(job.id)] }
        arguments += members
        let keys = ResendKeyspace(app: app)
        let reply = try await client.runScript(
            ResendScripts.schedule, keys: [.string(keys.due), .string(keys.entries), .string(keys.tallies), .string(keys.tallyValues)],
            arguments: arguments)
        guard let flags = reply.array?.compactMap(\.int), flags.count == counted.count else {
            throw StoreError.unexpected(reply, from: "the schedule script")
        }
        var counts: [String: Int] = [:]
        for (jobID, removed) in zip(counted, flags) where removed == 1 { counts[jobID, default: 0] += 1 }
        let tallies = tallied.compactMap { job in
            counts[job.jobID].map { ResendTally(id: job.id, jobID: job.jobID, counters: [.deadLettered: $0]) }
        }
        return ResendScheduling(expired: expired, tallies: tallies)
    }

    /// Claims up to `limit` entries due now (score ≤ clock), earliest first: moves each one's due
    /// time to now + ``ResendPolicy/lease`` so other workers skip it, and returns them. Atomic
    /// (one script): two workers never claim the same entry within a lease.
    ///
    /// - Parameter limit: at most this many entries; 0 returns none.
    /// - Throws: ``StoreError`` naming `app` or `limit`, or `unexpectedReply` for an
    ///   entry not written by this type; `RedisClientError`.
    package func claimDue(app: String, limit: Int) async throws -> [ResendEntry] {
        try StoreValidation.app(app)
        try StoreValidation.atLeast(0, limit, field: "limit")
        guard limit > 0 else { return [] }
        let now = clock()
        let keys = ResendKeyspace(app: app)
        let reply = try await client.runScript(
            LeasedQueueScripts.claimDue,
            keys: [.string(keys.due), .string(keys.entries)],
            arguments: [.string(String(now)), .string(String(now + policy.lease.wholeMilliseconds)), .integer(limit)]
        )
        guard let fields = reply.array, fields.count.isMultiple(of: 2) else {
            throw StoreError.unexpected(reply, from: "the claim-due script")
        }
        return try stride(from: 0, to: fields.count, by: 2).map { index in
            guard let member = fields[index].string.flatMap(ResendKeyspace.parseMember),
                let value = fields[index + 1].string.flatMap(ResendKeyspace.parseValue)
            else {
                throw StoreError.unexpected(reply, from: "the claim-due script")
            }
            return ResendEntry(
                jobID: member.jobID,
                token: member.token,
                attempts: value.attempts,
                firstFailedAt: value.firstFailedAt,
                lastReason: value.reason
            )
        }
    }

    /// Removes entries of job `jobID` that reached a final outcome (leased or not), and tallies
    /// the outcome of each one that was still there, in one script: `counting[i]` are the
    /// counters entry `i` adds to (e.g. `accepted` and `sent`; none: removed uncounted). The
    /// caller applies the tally to the job (``JobStore/apply(_:)``) and then ``forget(_:app:)``s
    /// it; one left behind is found by ``pendingTallies(app:writtenBefore:limit:)``.
    ///
    /// Removal is by job id and token only; see the type's notes.
    ///
    /// - Returns: for each entry, whether it was still present (an entry listed twice is present
    ///   only the first time), and the tally, `nil` when nothing was counted.
    /// - Throws: ``StoreError`` naming `app`, `jobID`, `entries[i].jobID` (another job's entry) or
    ///   `counting` (not one list per entry); `RedisClientError`.
    package func complete(
        app: String, jobID: String, _ entries: [ResendEntry], counting: [[JobCounter]]
    ) async throws -> (removed: [Bool], tally: ResendTally?) {
        try StoreValidation.app(app)
        try StoreValidation.jobID(jobID)
        for (index, entry) in entries.enumerated() where entry.jobID != jobID {
            throw StoreError(.invalidArgument, field: "entries[\(index)].jobID", message: "is \(entry.jobID), not the job completed, \(jobID)")
        }
        guard counting.count == entries.count else {
            throw StoreError(.invalidArgument, field: "counting", message: "\(counting.count) lists of counters for \(entries.count) entries")
        }
        guard !entries.isEmpty else { return ([], nil) }
        let keys = ResendKeyspace(app: app)
        let id = UUID().uuidString
        var arguments: [RedisArgument] = [.string(id), .string(String(clock())), .string(String(policy.retention.wholeMilliseconds)), .string(jobID)]
        arguments.reserveCapacity(4 + 2 * entries.count)
        for (entry, counters) in zip(entries, counting) {
            arguments.append(.string(ResendKeyspace.member(jobID: jobID, token: entry.token)))
            arguments.append(.string(counters.map(\.name).joined(separator: "\n")))
        }
        let reply = try await client.runScript(
            ResendScripts.complete, keys: [.string(keys.due), .string(keys.entries), .string(keys.tallies), .string(keys.tallyValues)],
            arguments: arguments)
        guard let flags = reply.array?.compactMap(\.int), flags.count == entries.count else {
            throw StoreError.unexpected(reply, from: "the complete script")
        }
        let removed = flags.map { $0 == 1 }
        var counters: [JobCounter: Int] = [:]
        for (wasThere, names) in zip(removed, counting) where wasThere {
            for counter in names { counters[counter, default: 0] += 1 }
        }
        return (removed, counters.isEmpty ? nil : ResendTally(id: id, jobID: jobID, counters: counters))
    }

    /// Removes a tally its completer has applied to its job.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func forget(_ tally: ResendTally, app: String) async throws {
        try StoreValidation.app(app)
        let keys = ResendKeyspace(app: app)
        _ = try await client.checkedPipeline([
            ["ZREM", .string(keys.tallies), .string(tally.id)], ["HDEL", .string(keys.tallyValues), .string(tally.id)],
        ])
    }

    /// Up to `limit` tallies written more than `age` ago, oldest first: completions whose
    /// completer may have died before it applied and forgot them. A value PushFleet did not
    /// write is skipped.
    ///
    /// - Throws: ``StoreError`` naming `app` or `limit`; `RedisClientError`.
    package func pendingTallies(app: String, writtenBefore age: Duration, limit: Int = 100) async throws -> [ResendTally] {
        try StoreValidation.app(app)
        try StoreValidation.atLeast(1, limit, field: "limit")
        let keys = ResendKeyspace(app: app)
        let reply = try await client.runScript(
            ResendScripts.pendingTallies, keys: [.string(keys.tallies), .string(keys.tallyValues)],
            arguments: [.string(String(clock() - age.wholeMilliseconds)), .integer(limit)])
        guard let fields = reply.array, fields.count.isMultiple(of: 2) else {
            throw StoreError.unexpected(reply, from: "the pending-tallies script")
        }
        return stride(from: 0, to: fields.count, by: 2).compactMap { index in
            guard let id = fields[index].string, let value = fields[index + 1].string else { return nil }
            return ResendTally(id: id, value: value)
        }
    }

    /// Makes entries due now, those that are still waiting for a later time (one `ZADD XX LT`:
    /// an entry completed meanwhile is not added back, one due already is left as it is): the
    /// online channel hands back the sends it could not deliver without waiting for their due
    /// time. An entry claimed by a worker (its due time the end of the lease) becomes due now
    /// too, so this is for entries that nothing can have claimed yet (``ResendFailure`` with a
    /// `retryAfter` not run out).
    ///
    /// - Returns: how many entries it moved.
    /// - Throws: ``StoreError`` naming `app` or `entries[i].jobID`; `RedisClientError`.
    @discardableResult
    package func expedite(app: String, _ entries: [ResendEntry]) async throws -> Int {
        try StoreValidation.app(app)
        for (index, entry) in entries.enumerated() {
            try StoreValidation.jobID(entry.jobID, field: "entries[\(index)].jobID")
        }
        guard !entries.isEmpty else { return 0 }
        let now = RedisArgument.string(String(clock()))
        var command: [RedisArgument] = ["ZADD", .string(ResendKeyspace(app: app).due), "XX", "LT", "CH"]
        command.reserveCapacity(5 + 2 * entries.count)
        for entry in entries {
            command.append(now)
            command.append(.string(ResendKeyspace.member(jobID: entry.jobID, token: entry.token)))
        }
        let reply = try await client.send(command)
        guard let moved = reply.int else {
            throw StoreError.unexpected(reply, from: "ZADD")
        }
        return Int(moved)
    }

    /// Entries waiting (due or leased).
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func depth(app: String) async throws -> Int {
        try StoreValidation.app(app)
        let reply = try await client.send("ZCARD", .string(ResendKeyspace(app: app).due))
        guard let count = reply.int else {
            throw StoreError.unexpected(reply, from: "ZCARD")
        }
        return Int(count)
    }

    /// The earliest due time (ms since 1970; a leased entry's is the end of its lease), or nil
    /// when empty.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func nextDueTime(app: String) async throws -> Int64? {
        try StoreValidation.app(app)
        let reply = try await client.send("ZRANGE", .string(ResendKeyspace(app: app).due), 0, 0, "WITHSCORES")
        guard let fields = reply.array else {
            throw StoreError.unexpected(reply, from: "ZRANGE")
        }
        if fields.isEmpty {
            return nil
        }
        guard fields.count == 2, let score = fields[1].string.flatMap(Double.init), let due = Int64(exactly: score.rounded()) else {
            throw StoreError.unexpected(reply, from: "ZRANGE")
        }
        return due
    }

    /// The due time of a failure at `now`: the policy's delay, or `retryAfter` when longer.
    private func dueTime(of failure: ResendFailure, now: Int64) -> Int64 {
        var delay = policy.delayMilliseconds(afterAttempts: failure.attempts, random: random())
        if let retryAfter = failure.retryAfter {
            delay = max(delay, retryAfter.roundedUpMilliseconds)
        }
        return now.addingReportingOverflow(delay).overflow ? .max : now + delay
    }
}
