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

/// A fleet's consumer groups (one per role, `<group-prefix>.<role>`) with their topics'
/// partition counts, and the rule for when the fleet's workers hold them settled: what a
/// benchmark or a test waits for before it publishes, since a worker still joining moves
/// partitions (and the work in progress on them) in the middle of a campaign.
package struct WorkerGroups: Sendable, Hashable {
    /// Each group's partition count.
    package let partitions: [String: Int]

    package init(prefix: String, jobPartitions: Int, deliveryPartitions: Int, feedbackPartitions: Int) {
        partitions = [
            WorkerRole.expand.group(prefix: prefix): jobPartitions,
            WorkerRole.send.group(prefix: prefix): deliveryPartitions,
            WorkerRole.feedback.group(prefix: prefix): feedbackPartitions,
        ]
    }

    /// Whether `shares` (one per worker: the partitions it holds, by group, as its
    /// `pushfleet_kafka_assigned_partitions` series say) hold every group settled: every worker
    /// reports every group, the shares add up to the group's partitions (none is between two
    /// owners), and each worker holds some of each group with partitions enough to go round.
    package func areSettled(_ shares: [[String: Int]]) -> Bool {
        guard !shares.isEmpty else { return false }
        for (group, total) in partitions {
            let held = shares.map { $0[group] }
            guard held.allSatisfy({ $0 != nil }) else { return false }  // a member not assigned yet
            let counts = held.compactMap { $0 }
            guard counts.reduce(0, +) == total else { return false }
            if total >= shares.count, counts.contains(0) { return false }
        }
        return true
    }
}
