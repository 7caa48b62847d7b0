public import Kafka
public import Logging
public import PushConfiguration
import PushCore

extension KafkaSettings {
    /// An idempotent producer for these settings (every `kafka.properties` passed through).
    /// Every process that talks to Kafka makes one at start, so this is where a configuration
    /// that turns TLS checks off is warned about.
    ///
    /// - Throws: `KafkaError` when librdkafka refuses the configuration.
    public func makeProducer(clientID: String, logger: Logger) throws -> KafkaProducer {
        let off = tlsChecksTurnedOff
        if !off.isEmpty {
            logger.warning(
                "the Kafka brokers' TLS certificates are not fully checked: anyone between this process and the brokers can read and change jobs",
                metadata: ["kafka.properties": "\(off.joined(separator: ", "))"])
        }
        return try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: bootstrapServers, clientID: clientID, properties: KafkaConfigurationProperties(properties)),
            logger: logger)
    }

    /// An admin client for these settings (every `kafka.properties` passed through).
    public func makeAdmin(logger: Logger) throws(KafkaError) -> KafkaAdmin {
        try KafkaAdmin(bootstrapServers: bootstrapServers, properties: KafkaConfigurationProperties(properties), logger: logger)
    }

    /// The pipeline's topics on the cluster compared with `layout` (``TopicAudit``), from one
    /// metadata request that creates nothing.
    public func auditTopics(admin: KafkaAdmin, layout: KafkaTopicLayout) async throws -> [TopicFinding] {
        let observed = try await admin.describeTopics().mapValues {
            ObservedTopic(partitions: $0.partitions.count, replicationFactor: $0.replicationFactor)
        }
        return TopicAudit.findings(TopicAudit.requirements(layout), observed: observed)
    }
}

/// A worker's refusal to start: topics of the pipeline do not exist on the cluster.
public struct PipelineTopicsMissing: Error, CustomStringConvertible {
    public let topics: [String]
    public let bootstrapServers: String

    public init(topics: [String], bootstrapServers: String) {
        self.topics = topics
        self.bootstrapServers = bootstrapServers
    }

    public var description: String {
        "the Kafka topics \(topics.joined(separator: ", ")) do not exist on \(bootstrapServers); "
            + "create them with `pushfleet topics create --config <file>` (partitions and replication from kafka.topics), "
            + "or with your cluster's tools, then start the worker again"
    }
}
