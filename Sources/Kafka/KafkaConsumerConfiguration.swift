import FlowControl

/// How a ``KafkaConsumer`` joins its group and hands messages to the application.
public struct KafkaConsumerConfiguration: Sendable {
    /// `bootstrap.servers`: comma-separated `host:port` list.
    public var bootstrapServers: String
    /// `group.id`: consumers with the same id share the topics' partitions.
    public var groupID: String
    public var topics: [String]
    /// `client.id`, shown in broker logs.
    public var clientID: String
    /// `session.timeout.ms`: how long the group waits for a silent member before reassigning
    /// its partitions.
    public var sessionTimeoutMilliseconds: Int
    /// `partition.assignment.strategy`: `cooperative-sticky` (the default: a member joining or
    /// leaving moves only the partitions that change owner, the others keep being consumed), or
    /// an eager one (`range`, `roundrobin`, `range,roundrobin`: every rebalance stops the whole
    /// group). Members of one group must agree.
    public var assignmentStrategy: String
    /// `group.instance.id`: static membership. A member that leaves and comes back with the same
    /// id within the session timeout takes its partitions back without a rebalance; unique per
    /// member and stable across its restarts (a pod name). `nil`: dynamic membership.
    public var groupInstanceID: String?
    /// `auto.offset.reset`: where a group with no committed offset starts (`earliest`|`latest`).
    public var autoOffsetReset: String
    /// The most fetched messages waiting for the application; the poll thread stops polling
    /// while it is full.
    public var bufferCapacity: Int
    /// How often processed offsets are committed while running.
    public var commitInterval: Duration
    /// On close, how long to wait for messages already handed to the application.
    public var shutdownGracePeriod: Duration
    /// When partitions are revoked, how long the rebalance waits for their messages already
    /// handed to the application, before committing and letting the next owner take them.
    public var revokeGracePeriod: Duration
    /// `statistics.interval.ms`: how often librdkafka reports the member's group state to a
    /// consumer's `onGroupState` (``KafkaGroupState``); `nil`, never.
    public var groupStateInterval: Duration?
    /// Any librdkafka property; these win over the fields above.
    public var properties: KafkaConfigurationProperties

    public init(
        bootstrapServers: String,
        groupID: String,
        topics: [String],
        clientID: String = "pushfleet",
        sessionTimeoutMilliseconds: Int = 6_000,
        assignmentStrategy: String = "cooperative-sticky",
        groupInstanceID: String? = nil,
        autoOffsetReset: String = "earliest",
        bufferCapacity: Int = 1_000,
        commitInterval: Duration = .milliseconds(500),
        shutdownGracePeriod: Duration = .seconds(10),
        revokeGracePeriod: Duration = .seconds(10),
        groupStateInterval: Duration? = nil,
        properties: KafkaConfigurationProperties = [:]
    ) {
        self.bootstrapServers = bootstrapServers
        self.groupID = groupID
        self.topics = topics
        self.clientID = clientID
        self.sessionTimeoutMilliseconds = sessionTimeoutMilliseconds
        self.assignmentStrategy = assignmentStrategy
        self.groupInstanceID = groupInstanceID
        self.autoOffsetReset = autoOffsetReset
        self.bufferCapacity = bufferCapacity
        self.commitInterval = commitInterval
        self.shutdownGracePeriod = shutdownGracePeriod
        self.revokeGracePeriod = revokeGracePeriod
        self.groupStateInterval = groupStateInterval
        self.properties = properties
    }

    /// `heartbeat.interval.ms`: a third of the session timeout (Kafka's rule of thumb), at most
    /// librdkafka's default of 3 s; a member that misses one heartbeat keeps its partitions.
    static func heartbeatIntervalMilliseconds(sessionTimeout: Int) -> Int {
        min(max(sessionTimeout / 3, 1), 3_000)
    }

    /// How long after a member stops answering (a killed process) every live member of its
    /// group has heard of the rebalance that drops it: its session times out, the coordinator
    /// notices at the next request of the group (a heartbeat comes from each live member every
    /// heartbeat interval), and each live member hears of the round at its next heartbeat.
    public static func lostMemberNoticed(sessionTimeoutMilliseconds: Int) -> Duration {
        .milliseconds(sessionTimeoutMilliseconds + 2 * heartbeatIntervalMilliseconds(sessionTimeout: sessionTimeoutMilliseconds))
    }

    var rdKafkaProperties: KafkaConfigurationProperties {
        var base: KafkaConfigurationProperties = [
            "bootstrap.servers": bootstrapServers,
            "group.id": groupID,
            "client.id": clientID,
            "session.timeout.ms": String(sessionTimeoutMilliseconds),
            "heartbeat.interval.ms": String(Self.heartbeatIntervalMilliseconds(sessionTimeout: sessionTimeoutMilliseconds)),
            "auto.offset.reset": autoOffsetReset,
            // Offsets are committed by this wrapper only, for processed messages only.
            "enable.auto.commit": "false",
            "enable.auto.offset.store": "false",
            "enable.partition.eof": "false",
            "partition.assignment.strategy": assignmentStrategy,
            // Prefetch is bounded by bytes (`queued.max.messages.kbytes`, 64 MB by default), not
            // by the default count of 100,000 messages: librdkafka 2.0 stops fetching at that
            // count and resumes only once the local queue is empty and its broker thread wakes,
            // so a consumer slower than the fetcher sat idle ~0.5 s each time (measured with
            // `debug=fetch`: "queued.min.messages exceeded", then nothing until "0/100000 msgs").
            "queued.min.messages": "1000000",
        ]
        if let groupInstanceID { base["group.instance.id"] = groupInstanceID }
        if let groupStateInterval { base["statistics.interval.ms"] = String(max(groupStateInterval.roundedUpMilliseconds, 1)) }
        return base.merging(properties)
    }
}
