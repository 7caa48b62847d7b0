/// How a long-running process (`pushfleet worker`, `feedback`, `api`) stops: a rule in a value
/// type, carried out by the executable's stop controller.
///
/// - The first SIGTERM or SIGINT starts a graceful shutdown: consumers leave their groups,
///   work in progress finishes, offsets are committed. Later signals change nothing.
/// - At the shutdown deadline (`worker.shutdown-deadline-seconds`) the work still running is
///   cancelled; it is left for the next owner (uncommitted messages, expiring leases, the resend
///   buffer), which is safe by design, and the process logs what it leaves.
/// - A process that stops within its deadline exits 0 (``ExitStatus/stopped``); one that
///   needed cancelling exits 75 (``ExitStatus/stoppedAtDeadline``), also when it has not
///   finished cancelling within the allowance after the deadline: then it exits at once
///   instead of waiting for what does not give way. It never crashes on a slow stop.
public struct ProcessStop: Sendable, Equatable {
    /// How the process ends after a stop signal.
    public struct ExitStatus: Hashable, Sendable, CustomStringConvertible {
        public let code: Int32

        /// Everything finished within the shutdown deadline.
        public static let stopped = ExitStatus(code: 0)
        /// The shutdown deadline passed and work in progress was cancelled and left for the
        /// next owner (`EX_TEMPFAIL` of sysexits.h: try again, which the next owner does).
        public static let stoppedAtDeadline = ExitStatus(code: 75)

        public var description: String { "\(code)" }
    }

    public enum Phase: Sendable, Equatable {
        case running
        /// Finishing work in progress, until the deadline.
        case draining
        /// The deadline passed; work in progress is being cancelled, until the allowance ends.
        case cancelling
        /// The process is ending with this status.
        case exiting(ExitStatus)
    }

    public enum Action: Sendable, Equatable {
        /// Start the graceful shutdown, and call ``deadlinePassed()`` after `deadline`.
        case shutDownGracefully(deadline: Duration)
        /// Cancel the work still running, say what is left unfinished, and call
        /// ``allowancePassed()`` after `allowance`.
        case cancel(allowance: Duration)
        /// End the process now with this status, saying what is left unfinished.
        case exit(ExitStatus)
        /// Nothing to do.
        case none
    }

    /// How long a graceful shutdown may take.
    public let deadline: Duration
    /// How long cancelled work may take to give way after the deadline.
    public let allowance: Duration
    public private(set) var phase = Phase.running

    public init(deadline: Duration, allowance: Duration = .seconds(5)) {
        self.deadline = deadline
        self.allowance = allowance
    }

    /// SIGTERM or SIGINT arrived.
    public mutating func signalReceived() -> Action {
        guard phase == .running else { return .none }
        phase = .draining
        return .shutDownGracefully(deadline: deadline)
    }

    /// The shutdown deadline passed.
    public mutating func deadlinePassed() -> Action {
        guard phase == .draining else { return .none }
        phase = .cancelling
        return .cancel(allowance: allowance)
    }

    /// The allowance after the deadline passed too.
    public mutating func allowancePassed() -> Action {
        guard phase == .cancelling else { return .none }
        phase = .exiting(.stoppedAtDeadline)
        return .exit(.stoppedAtDeadline)
    }

    /// Every service returned: the status to exit with, or `nil` when the process is already
    /// exiting (the allowance passed first).
    public mutating func servicesFinished() -> ExitStatus? {
        switch phase {
        case .running, .draining:
            phase = .exiting(.stopped)
            return .stopped
        case .cancelling:
            phase = .exiting(.stoppedAtDeadline)
            return .stoppedAtDeadline
        case .exiting:
            return nil
        }
    }
}
