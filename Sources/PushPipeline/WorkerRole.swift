/// What a worker process does; a process may take several roles.
public enum WorkerRole: String, CaseIterable, Sendable, Hashable {
    /// Consumes `push.jobs` and releases scheduled jobs.
    case expand
    /// Consumes `push.deliveries` and drains the resend buffer.
    case send
    /// Consumes `push.feedback`.
    case feedback
}
