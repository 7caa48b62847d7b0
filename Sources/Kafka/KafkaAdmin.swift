import CRdKafka
import FlowControl
import Logging

/// Topic administration and offset inspection.
///
/// Every call blocks inside librdkafka, so each runs through ``BlockingCalls``, off the
/// cooperative pool.
public final class KafkaAdmin: Sendable {
    private let client: RDKafkaClient
    private let bootstrapServers: String
    private let properties: KafkaConfigurationProperties
    private let logger: Logger

    /// - Parameter properties: any librdkafka property (security settings, timeouts).
    public init(bootstrapServers: String, properties: KafkaConfigurationProperties = [:], logger: Logger) throws(KafkaError) {
        self.bootstrapServers = bootstrapServers
        self.properties = properties
        self.logger = logger
        // Describing a topic must never create it: a producer's metadata requests would, on a
        // cluster with `auto.create.topics.enable` (and on the embedded one).
        let base: KafkaConfigurationProperties = [
            "bootstrap.servers": bootstrapServers, "client.id": "pushfleet-admin", "allow.auto.create.topics": "false",
        ]
        self.client = try RDKafkaClient(
            kind: .producer, properties: base.merging(properties), callbacks: RDKafkaCallbacks(logger: logger))
    }

    /// Creates topics. A topic that already exists with any layout is not an error.
    ///
    /// Needs a cluster with a controller (any Apache Kafka cluster). The embedded cluster has
    /// none: create its topics with `EmbeddedKafkaCluster.createTopic` (module EmbeddedKafka).
    public func createTopics(
        _ topics: [KafkaTopicSpecification], timeout: Duration = .seconds(30)
    ) async throws {
        guard !topics.isEmpty else { return }
        let client = self.client
        let timeoutMilliseconds = Int32(clamping: timeout.wholeMilliseconds)
        try await BlockingCalls.run { () throws(KafkaError) in
            var errorText = [CChar](repeating: 0, count: 512)
            var newTopics: [OpaquePointer?] = []
            defer { for topic in newTopics { rd_kafka_NewTopic_destroy(topic) } }
            for topic in topics {
                guard
                    let newTopic = rd_kafka_NewTopic_new(
                        topic.name, topic.partitions, topic.replicationFactor, &errorText, errorText.count)
                else {
                    throw KafkaError(code: .admin, message: "topic '\(topic.name)': \(String(cBuffer: errorText))")
                }
                for (key, value) in topic.configuration.sorted(by: { $0.key < $1.key }) {
                    rd_kafka_NewTopic_set_config(newTopic, key, value)
                }
                newTopics.append(newTopic)
            }
            let options = rd_kafka_AdminOptions_new(client.pointer, RD_KAFKA_ADMIN_OP_CREATETOPICS)
            defer { rd_kafka_AdminOptions_destroy(options) }
            rd_kafka_AdminOptions_set_operation_timeout(options, timeoutMilliseconds, &errorText, errorText.count)
            rd_kafka_AdminOptions_set_request_timeout(options, timeoutMilliseconds, &errorText, errorText.count)
            let resultQueue = rd_kafka_queue_new(client.pointer)
            defer { rd_kafka_queue_destroy(resultQueue) }
            rd_kafka_CreateTopics(client.pointer, &newTopics, newTopics.count, options, resultQueue)
            guard let event = rd_kafka_queue_poll(resultQueue, timeoutMilliseconds + 1_000) else {
                throw KafkaError(code: .timeout, message: "CreateTopics got no answer", isRetryable: true)
            }
            defer { rd_kafka_event_destroy(event) }
            let eventError = rd_kafka_event_error(event)
            guard eventError == RD_KAFKA_RESP_ERR_NO_ERROR else {
                throw KafkaError(
                    code: .admin, message: "CreateTopics failed: \(String(cString: rd_kafka_event_error_string(event)))",
                    underlying: KafkaErrorCode(eventError), isRetryable: KafkaErrorCode(eventError).isTransient)
            }
            var count = 0
            let results = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count)
            for index in 0..<count {
                guard let result = results?[index] else { continue }
                let err = rd_kafka_topic_result_error(result)
                if err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS { continue }
                let name = String(cString: rd_kafka_topic_result_name(result))
                let reason = rd_kafka_topic_result_error_string(result).map { String(cString: $0) } ?? ""
                throw KafkaError(code: .admin, message: "topic '\(name)': \(reason)", underlying: KafkaErrorCode(err))
            }
        }
    }

    /// The partitions of a topic and their leaders, from the cluster's metadata.
    public func describeTopic(_ name: String, timeout: Duration = .seconds(10)) async throws -> KafkaTopicDescription {
        let client = self.client
        let timeoutMilliseconds = Int32(clamping: timeout.wholeMilliseconds)
        return try await BlockingCalls.run { () throws(KafkaError) in
            let topic = rd_kafka_topic_new(client.pointer, name, nil)
            defer { rd_kafka_topic_destroy(topic) }
            var metadata: UnsafePointer<rd_kafka_metadata>?
            let err = rd_kafka_metadata(client.pointer, 0, topic, &metadata, timeoutMilliseconds)
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
                throw KafkaError(code: .admin, message: "metadata for '\(name)' failed", underlying: KafkaErrorCode(err), isRetryable: true)
            }
            defer { rd_kafka_metadata_destroy(metadata) }
            guard metadata.pointee.topic_cnt > 0 else {
                throw KafkaError(code: .admin, message: "topic '\(name)' not in metadata")
            }
            let described = metadata.pointee.topics[0]
            guard described.err == RD_KAFKA_RESP_ERR_NO_ERROR else {
                throw KafkaError(code: .admin, message: "topic '\(name)'", underlying: KafkaErrorCode(described.err))
            }
            return KafkaTopicDescription(described)
        }
    }

    /// Every topic of the cluster, by name, from one metadata request (which creates none).
    /// Topics the cluster reports with an error (a leader being elected) are left out.
    public func describeTopics(timeout: Duration = .seconds(10)) async throws -> [String: KafkaTopicDescription] {
        let client = self.client
        let timeoutMilliseconds = Int32(clamping: timeout.wholeMilliseconds)
        return try await BlockingCalls.run { () throws(KafkaError) in
            var metadata: UnsafePointer<rd_kafka_metadata>?
            let err = rd_kafka_metadata(client.pointer, 1, nil, &metadata, timeoutMilliseconds)
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
                throw KafkaError(code: .admin, message: "the cluster's metadata", underlying: KafkaErrorCode(err), isRetryable: true)
            }
            defer { rd_kafka_metadata_destroy(metadata) }
            var topics: [String: KafkaTopicDescription] = [:]
            for index in 0..<Int(metadata.pointee.topic_cnt) {
                let topic = metadata.pointee.topics[index]
                guard topic.err == RD_KAFKA_RESP_ERR_NO_ERROR, topic.topic != nil else { continue }
                let description = KafkaTopicDescription(topic)
                topics[description.name] = description
            }
            return topics
        }
    }

    /// The high watermark (the offset the next message will get) of each partition.
    public func highWatermarks(topic: String, timeout: Duration = .seconds(10)) async throws -> [Int32: Int64] {
        try await watermarks(topic: topic, timeout: timeout).mapValues(\.high)
    }

    /// The first offset still stored and the offset the next message will get, per partition.
    public func watermarks(topic: String, timeout: Duration = .seconds(10)) async throws -> [Int32: KafkaWatermarks] {
        let description = try await describeTopic(topic, timeout: timeout)
        let client = self.client
        let timeoutMilliseconds = Int32(clamping: timeout.wholeMilliseconds)
        return try await BlockingCalls.run { () throws(KafkaError) in
            var result: [Int32: KafkaWatermarks] = [:]
            for partition in description.partitions {
                var low: Int64 = 0
                var high: Int64 = 0
                let err = rd_kafka_query_watermark_offsets(client.pointer, topic, partition.id, &low, &high, timeoutMilliseconds)
                guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
                    throw KafkaError(
                        code: .admin, message: "watermarks of \(topic)[\(partition.id)]", underlying: KafkaErrorCode(err), isRetryable: true)
                }
                result[partition.id] = KafkaWatermarks(low: low, high: high)
            }
            return result
        }
    }

    /// The offsets a consumer group has committed for a topic's partitions; a partition with no
    /// commit is absent.
    public func committedOffsets(group: String, topic: String, timeout: Duration = .seconds(10)) async throws -> [Int32: Int64] {
        let description = try await describeTopic(topic, timeout: timeout)
        let properties = KafkaConfigurationProperties([
            "bootstrap.servers": bootstrapServers, "group.id": group, "client.id": "pushfleet-admin",
            "enable.auto.commit": "false",
        ]).merging(self.properties)
        let logger = self.logger
        let timeoutMilliseconds = Int32(clamping: timeout.wholeMilliseconds)
        return try await BlockingCalls.run { () throws(KafkaError) in
            let consumer = try RDKafkaClient(kind: .consumer, properties: properties, callbacks: RDKafkaCallbacks(logger: logger))
            let list = rd_kafka_topic_partition_list_new(Int32(description.partitions.count))
            defer { rd_kafka_topic_partition_list_destroy(list) }
            for partition in description.partitions {
                rd_kafka_topic_partition_list_add(list, topic, partition.id)
            }
            let err = rd_kafka_committed(consumer.pointer, list, timeoutMilliseconds)
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let list else {
                throw KafkaError(code: .admin, message: "committed offsets of group '\(group)'", underlying: KafkaErrorCode(err), isRetryable: true)
            }
            var result: [Int32: Int64] = [:]
            for index in 0..<Int(list.pointee.cnt) {
                let element = list.pointee.elems[index]
                if element.offset >= 0 { result[element.partition] = element.offset }
            }
            rd_kafka_consumer_close(consumer.pointer)
            return result
        }
    }
}

/// The range of offsets a partition holds: `low` is the first still stored, `high` the next
/// to be written.
public struct KafkaWatermarks: Sendable, Hashable {
    public let low: Int64
    public let high: Int64
}

/// A topic to create.
public struct KafkaTopicSpecification: Sendable, Hashable {
    public var name: String
    public var partitions: Int32
    public var replicationFactor: Int32
    /// Topic-level configuration such as `retention.ms`.
    public var configuration: [String: String]

    public init(name: String, partitions: Int32, replicationFactor: Int32 = 1, configuration: [String: String] = [:]) {
        self.name = name
        self.partitions = partitions
        self.replicationFactor = replicationFactor
        self.configuration = configuration
    }
}

/// A topic's layout as the cluster reports it.
public struct KafkaTopicDescription: Sendable, Hashable {
    public struct Partition: Sendable, Hashable {
        public let id: Int32
        public let leader: Int32
        public let replicas: [Int32]

        public init(id: Int32, leader: Int32, replicas: [Int32]) {
            self.id = id
            self.leader = leader
            self.replicas = replicas
        }
    }

    public let name: String
    public let partitions: [Partition]

    public init(name: String, partitions: [Partition]) {
        self.name = name
        self.partitions = partitions
    }

    /// The smallest number of replicas of any partition (0 without partitions).
    public var replicationFactor: Int { partitions.map(\.replicas.count).min() ?? 0 }

    init(_ topic: rd_kafka_metadata_topic) {
        let partitions = (0..<Int(topic.partition_cnt)).map { index in
            let partition = topic.partitions[index]
            return Partition(
                id: partition.id, leader: partition.leader,
                replicas: (0..<Int(partition.replica_cnt)).map { partition.replicas[$0] })
        }
        self.init(name: String(cString: topic.topic), partitions: partitions.sorted { $0.id < $1.id })
    }
}
