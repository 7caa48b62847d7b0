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
/// benchmark or a test waits for before it publishes (a worker still joining moves partitions,
/// and the work in progress on them, in the middle of a campaign) or before it stops a worker (a
/// member that leaves during a rebalance can hold the group's round up: docs/faults.md).
package struct WorkerGroups: Sendable, Hashable {
    /// Each group's partition count.
    package let partitions: [String: Int]

    /// How often a worker's consumers report their group state
    /// (`pushfleet_kafka_group_rebalancing`, from librdkafka's statistics).
    package static let groupStateInterval: Duration = .seconds(1)

    package init(prefix: String, jobPartitions: Int, deliveryPartitions: Int, feedbackPartitions: Int) {
        partitions = [
            WorkerRole.expand.group(prefix: prefix): jobPartitions,
            WorkerRole.send.group(prefix: prefix): deliveryPartitions,
            WorkerRole.feedback.group(prefix: prefix): feedbackPartitions,
        ]
    }

    /// Whether `views` (one per worker) hold every group settled: every worker reports every
    /// group, the shares add up to the group's partitions (none is between two owners), each
    /// worker holds some of each group with partitions enough to go round, and no worker's member
    /// is in a rebalance. With cooperative rebalancing the shares can add up while a member is
    /// still joining the next generation; only its own group state says so.
    package func areSettled(_ views: [WorkerGroupView]) -> Bool {
        guard !views.isEmpty else { return false }
        for (group, total) in partitions {
            let held = views.map { $0.assigned[group] }
            guard held.allSatisfy({ $0 != nil }) else { return false }  // a member not assigned yet
            let counts = held.compactMap { $0 }
            guard counts.reduce(0, +) == total else { return false }
            if total >= views.count, counts.contains(0) { return false }
            guard views.allSatisfy({ $0.rebalancing[group] == false }) else { return false }
        }
        return true
    }
}

/// What one worker's `/metrics` say of its consumer groups.
package struct WorkerGroupView: Sendable, Hashable, CustomStringConvertible {
    /// Partitions held, by group (`pushfleet_kafka_assigned_partitions`).
    package var assigned: [String: Int]
    /// Whether its member takes part in a rebalance, by group (`pushfleet_kafka_group_rebalancing`);
    /// a group without a report yet is missing.
    package var rebalancing: [String: Bool]

    package init(assigned: [String: Int], rebalancing: [String: Bool]) {
        self.assigned = assigned
        self.rebalancing = rebalancing
    }

    package var description: String {
        assigned.keys.sorted().map { "\($0): \(assigned[$0]!)\(rebalancing[$0] == false ? "" : " rebalancing")" }
            .joined(separator: ", ")
    }
}

/// Decides from samples of a fleet's `/metrics` when its groups are settled: settled in every
/// sample, unchanged, for at least `span`. A member's group state is as old as its last
/// statistics report, so one that has just started to join a new generation can still read
/// steady; a later report, one interval on, shows the join or its end. `span` is twice
/// ``WorkerGroups/groupStateInterval`` by default: a report, and one interval for the poll
/// thread that serves it.
///
/// A member that died (SIGKILL) stays in its groups until its session times out and the
/// coordinator notices, and a group can look settled meanwhile (the dead member holding none of
/// a small group's partitions); the round that drops it comes later. After a death, `notBefore`
/// is when every group has started that round and every live member has heard of it
/// (`KafkaConsumerConfiguration.lostMemberNoticed(sessionTimeoutMilliseconds:)` after it).
package struct SettledGroupsWatch: Sendable {
    package let groups: WorkerGroups
    package let span: Duration
    package let notBefore: ContinuousClock.Instant?
    private var settledSince: (views: [WorkerGroupView], at: ContinuousClock.Instant)?

    package init(groups: WorkerGroups, span: Duration = WorkerGroups.groupStateInterval * 2, notBefore: ContinuousClock.Instant? = nil) {
        self.groups = groups
        self.span = span
        self.notBefore = notBefore
    }

    /// Records the sample `views` taken at `now`; returns whether the groups count as settled.
    package mutating func observe(_ views: [WorkerGroupView], at now: ContinuousClock.Instant) -> Bool {
        guard groups.areSettled(views), notBefore.map({ now >= $0 }) ?? true else {
            settledSince = nil
            return false
        }
        guard let since = settledSince, since.views == views else {
            settledSince = (views, now)
            return span <= .zero
        }
        return now - since.at >= span
    }
}
