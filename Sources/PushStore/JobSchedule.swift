import FlowControl
import Redis

/// Jobs whose send-at time is in the future wait here, fleet-wide: a sorted set of job ids by
/// due time and a hash of their JSON, both in the slot `{schedule}`.
///
/// A worker ``claimDue(limit:)``s due jobs, which moves their due time to the end of a lease
/// instead of removing them, republishes them and then ``remove(jobID:)``s them. A worker that
/// dies in between loses nothing: the jobs are due again when the lease ends and another worker
/// claims them (so a job may be republished twice; the job store's sent markers make that
/// harmless).
package final class JobSchedule: Sendable {
    /// How long a claim hides a job from other workers.
    package let lease: Duration
    let client: any RedisCommands
    private let clock: @Sendable () -> Int64

    /// Creates a schedule over `client`.
    ///
    /// - Parameters:
    ///   - lease: how long a claim hides a job (at least 1 ms); default 30 s.
    ///   - clock: the time in milliseconds since 1970; tests pass a clock they move by hand.
    package init(
        client: any RedisCommands,
        lease: Duration = .seconds(30),
        clock: @escaping @Sendable () -> Int64 = StoreClock.system
    ) {
        precondition(lease >= .milliseconds(1), "lease must be at least 1 ms")
        self.client = client
        self.lease = lease
        self.clock = clock
    }

    /// Adds or replaces the job (idempotent per job id): its due time and JSON are the given
    /// ones, also when it was claimed.
    ///
    /// - Throws: ``StoreError`` naming `jobID` or `dueAt`; `RedisClientError`.
    package func schedule(_ job: ScheduledJob) async throws {
        try StoreValidation.jobID(job.jobID)
        try StoreValidation.atLeast(0, job.dueAt, field: "dueAt")
        _ = try await client.runScript(
            JobScripts.schedule,
            keys: [.string(JobKeyspace.scheduleDue), .string(JobKeyspace.scheduleJobs)],
            arguments: [.string(job.jobID), .string(String(job.dueAt)), .bytes(job.json)]
        )
    }

    /// Claims up to `limit` due jobs (due time ≤ clock), earliest first: their due time moves to
    /// now + ``lease`` (so a worker that dies after claiming does not lose them); returns them
    /// with that new due time. Atomic (one script): two workers never claim the same job within
    /// a lease.
    ///
    /// - Parameter limit: at most this many jobs; 0 returns none.
    /// - Throws: ``StoreError`` naming `limit`; `RedisClientError`.
    package func claimDue(limit: Int) async throws -> [ScheduledJob] {
        try StoreValidation.atLeast(0, limit, field: "limit")
        guard limit > 0 else { return [] }
        let now = clock()
        let leaseEnd = now + lease.wholeMilliseconds
        let reply = try await client.runScript(
            LeasedQueueScripts.claimDue,
            keys: [.string(JobKeyspace.scheduleDue), .string(JobKeyspace.scheduleJobs)],
            arguments: [.string(String(now)), .string(String(leaseEnd)), .integer(limit)]
        )
        guard let fields = reply.array, fields.count.isMultiple(of: 2) else {
            throw StoreError.unexpected(reply, from: "the claim-schedule script")
        }
        return try stride(from: 0, to: fields.count, by: 2).map { index in
            guard let jobID = fields[index].string, let json = fields[index + 1].bytes else {
                throw StoreError.unexpected(reply, from: "the claim-schedule script")
            }
            return ScheduledJob(jobID: jobID, dueAt: leaseEnd, json: json)
        }
    }

    /// Removes a job once it was republished (or cancelled); removing an unknown job does nothing.
    ///
    /// - Throws: ``StoreError`` naming `jobID`; `RedisClientError`.
    package func remove(jobID: String) async throws {
        try StoreValidation.jobID(jobID)
        _ = try await client.runScript(
            LeasedQueueScripts.remove,
            keys: [.string(JobKeyspace.scheduleDue), .string(JobKeyspace.scheduleJobs)],
            arguments: [.string(jobID)]
        )
    }

    /// The number of jobs waiting (due, leased or in the future).
    package func count() async throws -> Int {
        let reply = try await client.send("ZCARD", .string(JobKeyspace.scheduleDue))
        guard let count = reply.int else {
            throw StoreError.unexpected(reply, from: "ZCARD")
        }
        return Int(count)
    }
}
