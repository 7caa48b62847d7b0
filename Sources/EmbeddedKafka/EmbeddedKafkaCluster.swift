import CRdKafka
import Kafka
import Logging
import Synchronization

/// A Kafka cluster inside this process: librdkafka's mock cluster, speaking the Kafka protocol
/// on loopback ports, so that clients in this and other processes connect to
/// ``bootstrapServers`` as to any cluster.
///
/// It is the default Kafka of `pushfleet demo`, the tests and the benchmarks. Fault hooks take
/// brokers down and inject error codes into requests. It keeps data in memory only, and only
/// the newest 5 MB or so of each partition: older data is dropped as if by retention, so
/// consumers must keep up (or topics need enough partitions) for nothing to be lost. Two more
/// differences from a real broker: it holds every fetch for the consumer's full
/// `fetch.wait.max.ms`, and it does not serve CreateTopics (use ``createTopic(_:partitions:replicationFactor:)``).
public final class EmbeddedKafkaCluster: Sendable {
    /// The client handle whose threads run the mock brokers.
    private let host: RDKafkaClient
    private let cluster: MockClusterPointer
    /// Comma-separated `host:port` of the brokers.
    public let bootstrapServers: String
    public let brokerCount: Int32
    /// The brokers' loopback ports, read from ``bootstrapServers``.
    let brokerPorts: [UInt16]

    /// Starts `brokers` mock brokers on loopback.
    ///
    /// - Parameter noDelay: accept connections with Nagle's algorithm off, as a real broker
    ///   does (the default). librdkafka's mock brokers leave it on, so an answer written in
    ///   pieces waits for the client's delayed acknowledgement (up to 40 ms on Linux) whenever
    ///   the client has nothing to send: the start of every client and the end of every produce
    ///   burst. `false` keeps the mock's own behaviour.
    public init(brokers: Int32 = 1, noDelay: Bool = true, logger: Logger) throws(KafkaError) {
        precondition(brokers > 0, "an embedded cluster needs at least one broker")
        let host = try RDKafkaClient(
            kind: .producer, properties: ["client.id": "pushfleet-embedded-cluster"],
            callbacks: RDKafkaCallbacks(logger: logger))
        guard let cluster = rd_kafka_mock_cluster_new(host.pointer, brokers) else {
            throw KafkaError(code: .embeddedCluster, message: "the mock cluster did not start")
        }
        self.host = host
        self.cluster = MockClusterPointer(pointer: cluster)
        self.bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
        self.brokerCount = brokers
        self.brokerPorts = bootstrapServers.split(separator: ",").compactMap { $0.split(separator: ":").last.flatMap { UInt16($0) } }
        guard noDelay else { return }
        let changed = ProcessSockets.disableNagle(onListenersAt: Set(brokerPorts))
        if changed != brokerPorts.count {
            logger.warning(
                "embedded brokers keep Nagle's algorithm; answers may stall up to 40 ms",
                metadata: ["kafka.listeners": "\(brokerPorts.count)", "kafka.changed": "\(changed)"])
        }
    }

    /// Creates a topic with its partitions spread over the brokers.
    public func createTopic(_ name: String, partitions: Int32, replicationFactor: Int32 = 1) throws(KafkaError) {
        let err = rd_kafka_mock_topic_create(cluster.pointer, name, partitions, replicationFactor)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError(code: .embeddedCluster, message: "create topic '\(name)'", underlying: KafkaErrorCode(err))
        }
    }

    /// Makes a broker unreachable: its connections close and new ones are refused.
    ///
    /// librdkafka's mock (2.0.2) closes the broker's listener and binds a new one to the same
    /// port at once, and aborts the whole process when that bind fails; it has been seen to
    /// under heavy load. Tests that run in CI make outages with dropped connections instead
    /// (``injectRequestErrors(_:errors:)`` with ``KafkaErrorCode/transport``).
    public func setBrokerDown(_ brokerID: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_broker_set_down(cluster.pointer, brokerID), "broker \(brokerID) down")
    }

    /// Brings a broker back.
    public func setBrokerUp(_ brokerID: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_broker_set_up(cluster.pointer, brokerID), "broker \(brokerID) up")
    }

    /// Adds latency to every answer of a broker.
    public func setBrokerRoundTripTime(_ brokerID: Int32, milliseconds: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_broker_set_rtt(cluster.pointer, brokerID, milliseconds), "broker \(brokerID) rtt")
    }

    /// Moves a partition's leadership to another broker.
    public func setPartitionLeader(topic: String, partition: Int32, brokerID: Int32) throws(KafkaError) {
        try check(
            rd_kafka_mock_partition_set_leader(cluster.pointer, topic, partition, brokerID),
            "leader of \(topic)[\(partition)]")
    }

    /// The producer properties under which ``injectRequestErrors(_:errors:)`` on `.produce`
    /// loses nothing: one request in flight per connection. The mock checks sequence numbers only
    /// for transactional producers, so with several requests in flight it fails one with the
    /// injected error and stores the next, which a real broker refuses as out of order; librdkafka,
    /// seeing the later request acknowledged, reports the failed one's messages delivered, and
    /// they are lost. 50 single sends with no linger lost 1 to 3 messages in 3 runs of 20 with 5
    /// requests in flight, none in 20 with 1 (2026-12-05). A producer of the product, against a
    /// real broker, needs none of this.
    public static let producerPropertiesForInjectedErrors = ["max.in.flight.requests.per.connection": "1"]

    /// Answers the next requests of one API (any broker) with these error codes, in order. A
    /// producer facing injected produce errors needs ``producerPropertiesForInjectedErrors``.
    public func injectRequestErrors(_ api: KafkaAPIKey, errors: [KafkaErrorCode]) {
        let codes = errors.map(\.cValue)
        rd_kafka_mock_push_request_errors_array(cluster.pointer, api.rawValue, codes.count, codes)
    }

    /// Removes errors injected and not yet used.
    public func clearRequestErrors(_ api: KafkaAPIKey) {
        rd_kafka_mock_clear_request_errors(cluster.pointer, api.rawValue)
    }

    private func check(_ err: rd_kafka_resp_err_t, _ what: String) throws(KafkaError) {
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError(code: .embeddedCluster, message: what, underlying: KafkaErrorCode(err))
        }
    }

    deinit {
        rd_kafka_mock_cluster_destroy(cluster.pointer)
    }
}

/// The mock cluster handle. librdkafka serialises mock operations onto the cluster's own thread,
/// so calls from any thread are safe.
private struct MockClusterPointer: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// A Kafka protocol API, for injecting errors into its requests.
public struct KafkaAPIKey: Hashable, Sendable {
    public let rawValue: Int16

    public init(rawValue: Int16) {
        self.rawValue = rawValue
    }

    public static let produce = Self(rawValue: 0)
    public static let fetch = Self(rawValue: 1)
    public static let listOffsets = Self(rawValue: 2)
    public static let metadata = Self(rawValue: 3)
    public static let offsetCommit = Self(rawValue: 8)
    public static let offsetFetch = Self(rawValue: 9)
    public static let findCoordinator = Self(rawValue: 10)
    public static let joinGroup = Self(rawValue: 11)
    public static let heartbeat = Self(rawValue: 12)
    public static let syncGroup = Self(rawValue: 14)
    public static let initProducerID = Self(rawValue: 22)
}
