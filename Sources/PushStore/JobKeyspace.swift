/// The Redis keys of one job (see `schemas/redis.md`), and those of the job schedule.
///
/// Every key of a job starts with `pf:{job:<jobID>}:`, so they share the job's hash slot and one
/// script updates the sent markers and the counters together, atomically in a Redis Cluster.
struct JobKeyspace: Sendable {
    /// `pf:{job:<jobID>}:`
    let base: String

    init(jobID: String) {
        base = "pf:{job:\(jobID)}:"
    }

    /// STRING: the job's JSON, stored once (`SET NX PX`).
    var spec: String { base + "spec" }
    /// HASH counter name → integer: the job's statistics.
    var stats: String { base + "stats" }
    /// HASH chunk id → token count: the chunks the expand stage published.
    var chunks: String { base + "chunks" }
    /// SET of binary tokens that reached a final outcome (sent markers).
    var sent: String { base + "sent" }
    /// HASH: the job's control state (``JobControl``): `state`, `breaker`, `reason`, `paused-by`,
    /// `changed-at`, `rate`, `gate`, `version`.
    var control: String { base + "control" }
    /// LIST of `push.feedback` events (JSON) held while the job's gate is `hold`.
    var held: String { base + "held" }
    /// STRING: who is sending chunk `chunkID` now (a lease with a TTL).
    func lease(chunkID: String) -> String { base + "lease:" + chunkID }
    /// SET of binary tokens that reported `event` (delivered, opened).
    func receipts(_ event: ReceiptEvent) -> String { base + "receipts:" + event.rawValue }

    /// ZSET job id → due time (ms since 1970): jobs waiting for their send-at time.
    static let scheduleDue = "pf:{schedule}:due"
    /// HASH job id → the JSON of a scheduled job.
    static let scheduleJobs = "pf:{schedule}:jobs"
}
