/// Kafka connection and consumer-group settings (`kafka:`).
public struct KafkaSettings: Sendable, Equatable {
    /// Comma-separated `host:port` bootstrap brokers (`bootstrap-servers`); required, non-empty.
    public var bootstrapServers: String
    /// Prefix of the consumer group ids (`group-prefix`); default `"pushfleet"`.
    public var groupPrefix: String
    /// Extra librdkafka properties (`properties`), passed through verbatim; default none.
    public var properties: [String: String]

    /// Creates Kafka settings; every parameter but `bootstrapServers` has the documented default.
    public init(bootstrapServers: String, groupPrefix: String = "pushfleet", properties: [String: String] = [:]) {
        self.bootstrapServers = bootstrapServers
        self.groupPrefix = groupPrefix
        self.properties = properties
    }

    /// The consumer group of the expand workers: `<group-prefix>.expand`.
    public var expandGroup: String { "\(groupPrefix).expand" }
    /// The consumer group of the send workers: `<group-prefix>.send`.
    public var sendGroup: String { "\(groupPrefix).send" }
    /// The consumer group of the feedback workers: `<group-prefix>.feedback`.
    public var feedbackGroup: String { "\(groupPrefix).feedback" }
}
