/// The Redis keys of one job (see `schemas/redis.md`), and those of the job schedule.
///
/// Every key of a job starts with `pf:{job:<jobID>}:`, so they share the job's hash slot; its
/// sent state is spread over ranges of positions, each in its own slot (``SentRangeKeyspace``).
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
    /// SET of the numbers of the sent-state ranges the job has written (``SentRangeKeyspace``).
    var ranges: String { base + "ranges" }
    /// HASH: the job's control state (``JobControl``): `state`, `breaker`, `reason`, `paused-by`,
    /// `changed-at`, `rate`, `gate`, `version`.
    var control: String { base + "control" }
    /// LIST of `push.feedback` events (JSON) held while the job's gate is `hold`.
    var held: String { base + "held" }
    /// LIST of the newest dead letters of the job's notifications (JSON), newest first (``DeadLetterLog``).
    var deadLetters: String { base + "dead-letters" }
    /// STRING: who is sending chunk `chunkID` now (a lease with a TTL).
    func lease(chunkID: String) -> String { base + "lease:" + chunkID }
    /// SET of binary tokens whose notification APNs accepted on a resend from the buffer (a
    /// resend has no position in the sent state): what a recall adds to the positions accepted.
    var acceptedResends: String { base + "accepted-resends" }
    /// STRING `<mode> <recall job id>`: the job that recalls this one (`SET NX`: one recall
    /// per campaign).
    var recalledBy: String { base + "recalled-by" }
    /// SET of the ids of the resend tallies applied to `stats` (``ResendTally``): what makes
    /// applying one twice count it once.
    var appliedTallies: String { base + "applied-tallies" }
    /// SET of binary tokens that reported `event` (delivered, opened).
    func receipts(_ event: ReceiptEvent) -> String { base + "receipts:" + event.rawValue }

    /// ZSET job id → due time (ms since 1970): jobs waiting for their send-at time.
    static let scheduleDue = "pf:{schedule}:due"
    /// HASH job id → the JSON of a scheduled job.
    static let scheduleJobs = "pf:{schedule}:jobs"
}

/// The keys of one range of a job's sent state: positions `range × 65,536 ..< (range + 1) ×
/// 65,536` (device ids, or indexes in a token job's list), in their own hash slot
/// `{sent:<jobID>:<range>}`, so that a job's sent state spreads over the cluster and no key
/// holds more than one range's 16 KiB of bits (markers, and refused bits where an outcome was no
/// acceptance). The prefix differs from the job's own `{job:…}`: a job id may hold `:`, and the range,
/// a number, is always last, so no two (job, range) pairs and no job share a key.
struct SentRangeKeyspace: Sendable {
    /// Positions per range.
    static let positions = 1 << 16

    /// `pf:{sent:<jobID>:<range>}:`
    let base: String

    init(jobID: String, range: Int) {
        base = "pf:{sent:\(jobID):\(range)}:"
    }

    /// STRING, a bitmap: bit `position mod 65,536` is set once the position reached a final
    /// outcome (its sent marker); bit 65,536 + `position mod 65,536` when that outcome was not
    /// APNs's acceptance (its refused bit: a recall goes to the marked positions without one).
    var sent: String { base + "sent" }
    /// HASH counter name → integer: the outcome counters of the range's positions (``JobStore/statistics(jobID:)`` adds them up).
    var stats: String { base + "stats" }

    static func range(of position: UInt32) -> Int { Int(position) / positions }
    static func offset(of position: UInt32) -> Int { Int(position) % positions }
}
