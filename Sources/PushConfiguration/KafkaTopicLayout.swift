/// The layout of the pipeline's five topics (`kafka.topics`): what `pushfleet topics create`
/// creates and `pushfleet topics check` expects. Workers only require that the topics exist.
public struct KafkaTopicLayout: Sendable, Equatable {
    /// Partitions of `push.jobs` (`partitions.jobs`); default 12. Bounds the expand workers.
    public var jobsPartitions: Int
    /// Partitions of `push.deliveries` (`partitions.deliveries`); default 48. Bounds the send
    /// workers: each consumes at least one.
    public var deliveriesPartitions: Int
    /// Partitions of `push.feedback` (`partitions.feedback`); default 6.
    public var feedbackPartitions: Int
    /// Partitions of `push.dlq` (`partitions.dead-letters`); default 6.
    public var deadLetterPartitions: Int
    /// Partitions of `push.online` (`partitions.online`); default 12.
    public var onlinePartitions: Int
    /// Replicas of every partition (`replication-factor`); `nil` (default): the brokers'
    /// `default.replication.factor`.
    public var replicationFactor: Int?
    /// The topics' `min.insync.replicas` (`min-insync-replicas`); `nil` (default): the brokers'.
    public var minInSyncReplicas: Int?

    /// Creates a layout; every parameter has the documented default.
    public init(
        jobsPartitions: Int = 12, deliveriesPartitions: Int = 48, feedbackPartitions: Int = 6, deadLetterPartitions: Int = 6,
        onlinePartitions: Int = 12, replicationFactor: Int? = nil, minInSyncReplicas: Int? = nil
    ) {
        self.jobsPartitions = jobsPartitions
        self.deliveriesPartitions = deliveriesPartitions
        self.feedbackPartitions = feedbackPartitions
        self.deadLetterPartitions = deadLetterPartitions
        self.onlinePartitions = onlinePartitions
        self.replicationFactor = replicationFactor
        self.minInSyncReplicas = minInSyncReplicas
    }
}
