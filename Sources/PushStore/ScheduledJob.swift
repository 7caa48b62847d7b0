/// A job waiting in the ``JobSchedule`` for its send-at time.
package struct ScheduledJob: Sendable, Hashable {
    /// The job's id (1–128 bytes of UTF-8, no `{`, `}` or control characters).
    package var jobID: String
    /// When the job is due, in milliseconds since 1970 (≥ 0).
    package var dueAt: Int64
    /// The job's JSON, republished when it is due.
    package var json: [UInt8]

    package init(jobID: String, dueAt: Int64, json: [UInt8]) {
        self.jobID = jobID
        self.dueAt = dueAt
        self.json = json
    }
}
