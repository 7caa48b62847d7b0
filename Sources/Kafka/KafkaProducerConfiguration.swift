/// How a ``KafkaProducer`` connects and batches. Defaults suit PushFleet's job and delivery
/// topics: idempotent, every replica acknowledges, small linger for batching.
public struct KafkaProducerConfiguration: Sendable {
    /// `bootstrap.servers`: comma-separated `host:port` list.
    public var bootstrapServers: String
    /// `client.id`, shown in broker logs.
    public var clientID: String
    /// `enable.idempotence`: no duplicates or reordering from producer retries; implies acks=all.
    public var idempotent: Bool
    /// `linger.ms`: how long to wait to fill a batch.
    public var lingerMilliseconds: Int
    /// `batch.num.messages`: the most messages in one batch.
    public var batchMessages: Int
    /// The most messages waiting for confirmation at once; `send` suspends beyond it.
    /// Also librdkafka's `queue.buffering.max.messages`.
    public var maxInFlightMessages: Int
    /// `message.timeout.ms`: how long librdkafka keeps retrying a message before failing it.
    public var deliveryTimeoutMilliseconds: Int
    /// Any librdkafka property; these win over the fields above.
    public var properties: KafkaConfigurationProperties

    public init(
        bootstrapServers: String,
        clientID: String = "pushfleet",
        idempotent: Bool = true,
        lingerMilliseconds: Int = 5,
        batchMessages: Int = 10_000,
        maxInFlightMessages: Int = 100_000,
        deliveryTimeoutMilliseconds: Int = 120_000,
        properties: KafkaConfigurationProperties = [:]
    ) {
        self.bootstrapServers = bootstrapServers
        self.clientID = clientID
        self.idempotent = idempotent
        self.lingerMilliseconds = lingerMilliseconds
        self.batchMessages = batchMessages
        self.maxInFlightMessages = maxInFlightMessages
        self.deliveryTimeoutMilliseconds = deliveryTimeoutMilliseconds
        self.properties = properties
    }

    var rdKafkaProperties: KafkaConfigurationProperties {
        var base: KafkaConfigurationProperties = [
            "bootstrap.servers": bootstrapServers,
            "client.id": clientID,
            "enable.idempotence": idempotent ? "true" : "false",
            "linger.ms": String(lingerMilliseconds),
            "batch.num.messages": String(batchMessages),
            "queue.buffering.max.messages": String(maxInFlightMessages),
            "message.timeout.ms": String(deliveryTimeoutMilliseconds),
        ]
        if idempotent { base["acks"] = "all" }
        return base.merging(properties)
    }
}
