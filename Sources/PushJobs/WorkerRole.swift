import PushCore

/// What a worker process does; a process may take several roles.
public enum WorkerRole: String, CaseIterable, Sendable, Hashable {
    /// Consumes `push.jobs` and releases scheduled jobs.
    case expand
    /// Consumes `push.deliveries` and drains the resend buffer.
    case send
    /// Consumes `push.feedback`.
    case feedback
}

extension WorkerRole {
    /// The topic the role consumes.
    public var topic: String {
        switch self {
        case .expand: PushTopic.jobs
        case .send: PushTopic.deliveries
        case .feedback: PushTopic.feedback
        }
    }

    /// The role's consumer group: `<group-prefix>.<role>`.
    public func group(prefix: String) -> String {
        "\(prefix).\(rawValue)"
    }
}
