public import PushConfiguration
import PushCore

/// What the pipeline needs of one of its Kafka topics.
public struct TopicRequirement: Sendable, Equatable {
    public let name: String
    public let partitions: Int
    /// `nil`: the brokers' default, not checked.
    public let replicationFactor: Int?

    public init(name: String, partitions: Int, replicationFactor: Int?) {
        self.name = name
        self.partitions = partitions
        self.replicationFactor = replicationFactor
    }
}

/// What a cluster has of a topic.
public struct ObservedTopic: Sendable, Equatable {
    public let partitions: Int
    /// The fewest replicas of any of its partitions.
    public let replicationFactor: Int

    public init(partitions: Int, replicationFactor: Int) {
        self.partitions = partitions
        self.replicationFactor = replicationFactor
    }
}

/// One verdict of ``TopicAudit`` on one topic.
public enum TopicFinding: Sendable, Equatable {
    /// The topic does not exist: no worker can run.
    case missing(TopicRequirement)
    /// Fewer partitions than the layout: fewer consumers of a group can work at once.
    case fewerPartitions(topic: String, has: Int, wanted: Int)
    /// Fewer replicas than the layout: a broker lost can lose or stop the topic.
    case fewerReplicas(topic: String, has: Int, wanted: Int)
    /// As the layout asks, or larger.
    case sufficient(topic: String, partitions: Int, replicationFactor: Int)

    public var topic: String {
        switch self {
        case .missing(let requirement): requirement.name
        case .fewerPartitions(let topic, _, _), .fewerReplicas(let topic, _, _), .sufficient(let topic, _, _): topic
        }
    }

    /// Whether the topic falls short of the layout.
    public var isShortfall: Bool {
        if case .sufficient = self { false } else { true }
    }

    /// One line for an operator.
    public var description: String {
        switch self {
        case .missing(let requirement):
            "\(requirement.name): missing (the layout asks for \(requirement.partitions) partitions)"
        case .fewerPartitions(let topic, let has, let wanted):
            "\(topic): \(has) partitions, fewer than the \(wanted) of the layout: at most \(has) workers of its group work at once"
        case .fewerReplicas(let topic, let has, let wanted):
            "\(topic): replication factor \(has), below the \(wanted) of the layout"
        case .sufficient(let topic, let partitions, let replicationFactor):
            "\(topic): \(partitions) partitions, replication factor \(replicationFactor): ok"
        }
    }
}

/// Compares the pipeline's topics on a cluster with the configured layout (`kafka.topics`):
/// the rule behind `pushfleet topics check|create` and the check a worker makes at start.
public enum TopicAudit {
    /// The five topics of the pipeline as `layout` wants them, in pipeline order.
    public static func requirements(_ layout: KafkaTopicLayout) -> [TopicRequirement] {
        [
            (PushTopic.jobs, layout.jobsPartitions), (PushTopic.deliveries, layout.deliveriesPartitions),
            (PushTopic.feedback, layout.feedbackPartitions), (PushTopic.deadLetters, layout.deadLetterPartitions),
            (PushTopic.online, layout.onlinePartitions),
        ].map { TopicRequirement(name: $0.0, partitions: $0.1, replicationFactor: layout.replicationFactor) }
    }

    /// The findings for each requirement, in order: a missing topic, or each way an existing one
    /// falls short (partitions, replicas), or that it is sufficient. Topics of the cluster
    /// that are not required are ignored.
    public static func findings(_ requirements: [TopicRequirement], observed: [String: ObservedTopic]) -> [TopicFinding] {
        requirements.flatMap { requirement -> [TopicFinding] in
            guard let topic = observed[requirement.name] else { return [.missing(requirement)] }
            var findings: [TopicFinding] = []
            if topic.partitions < requirement.partitions {
                findings.append(.fewerPartitions(topic: requirement.name, has: topic.partitions, wanted: requirement.partitions))
            }
            if let wanted = requirement.replicationFactor, topic.replicationFactor < wanted {
                findings.append(.fewerReplicas(topic: requirement.name, has: topic.replicationFactor, wanted: wanted))
            }
            return findings.isEmpty
                ? [.sufficient(topic: requirement.name, partitions: topic.partitions, replicationFactor: topic.replicationFactor)]
                : findings
        }
    }

    /// The required topics the cluster lacks.
    public static func missing(_ findings: [TopicFinding]) -> [TopicRequirement] {
        findings.compactMap { if case .missing(let requirement) = $0 { requirement } else { nil } }
    }
}
