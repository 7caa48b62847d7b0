/// Kafka connection and consumer-group settings (`kafka:`).
public struct KafkaSettings: Sendable, Equatable {
    /// Comma-separated `host:port` bootstrap brokers (`bootstrap-servers`); required, non-empty.
    public var bootstrapServers: String
    /// Prefix of the consumer group ids (`group-prefix`); default `"pushfleet"`.
    public var groupPrefix: String
    /// Extra librdkafka properties (`properties`), passed through verbatim; default none.
    public var properties: [String: String]
    /// How the groups share partitions (`assignment-strategy`): `cooperative-sticky` (default;
    /// a worker joining or leaving moves only the partitions that change owner) or an eager
    /// strategy (`range`, `roundrobin`, `range,roundrobin`: every rebalance stops each group).
    public var assignmentStrategy: String
    /// Static membership (`group-instance-id`): this worker's stable id, e.g. its pod name. A
    /// restarted worker takes its partitions back without a rebalance if it returns within the
    /// session timeout. Each group gets `<id>.<role>`. Default none (dynamic membership).
    public var groupInstanceID: String?
    /// `session-timeout-ms`: how long a group waits for a silent worker before its partitions
    /// move; default 6,000, the least a Kafka broker accepts by default (librdkafka heartbeats
    /// from its own thread, so a busy worker stays in; a killed one's partitions wait this long).
    /// With static membership, set it above a restart's duration.
    public var sessionTimeoutMilliseconds: Int
    /// The layout of the pipeline's topics (`topics`), for `pushfleet topics create|check`.
    public var topics: KafkaTopicLayout

    /// The strategies `assignment-strategy` accepts.
    public static let assignmentStrategies: Set<String> = ["cooperative-sticky", "range", "roundrobin", "range,roundrobin"]

    /// Creates Kafka settings; every parameter but `bootstrapServers` has the documented default.
    public init(
        bootstrapServers: String, groupPrefix: String = "pushfleet", properties: [String: String] = [:],
        assignmentStrategy: String = "cooperative-sticky", groupInstanceID: String? = nil, sessionTimeoutMilliseconds: Int = 6_000,
        topics: KafkaTopicLayout = KafkaTopicLayout()
    ) {
        self.bootstrapServers = bootstrapServers
        self.groupPrefix = groupPrefix
        self.properties = properties
        self.assignmentStrategy = assignmentStrategy
        self.groupInstanceID = groupInstanceID
        self.sessionTimeoutMilliseconds = sessionTimeoutMilliseconds
        self.topics = topics
    }

    /// The `properties` that turn off a check of the brokers' TLS certificates
    /// (`enable.ssl.certificate.verification: false`, `ssl.endpoint.identification.algorithm:
    /// none`), as `name=value`, sorted; empty when every check stays on, as it does by default.
    public var tlsChecksTurnedOff: [String] {
        var off: [String] = []
        if let value = properties["enable.ssl.certificate.verification"], ["false", "f", "0"].contains(value.lowercased()) {
            off.append("enable.ssl.certificate.verification=\(value)")
        }
        if let value = properties["ssl.endpoint.identification.algorithm"], value.lowercased() == "none" {
            off.append("ssl.endpoint.identification.algorithm=\(value)")
        }
        return off
    }

    /// The consumer group of the expand workers: `<group-prefix>.expand`.
    public var expandGroup: String { "\(groupPrefix).expand" }
    /// The consumer group of the send workers: `<group-prefix>.send`.
    public var sendGroup: String { "\(groupPrefix).send" }
    /// The consumer group of the feedback workers: `<group-prefix>.feedback`.
    public var feedbackGroup: String { "\(groupPrefix).feedback" }
}
