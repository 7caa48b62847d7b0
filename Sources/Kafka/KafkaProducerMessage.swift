/// A message to publish.
public struct KafkaProducerMessage: Sendable, Hashable {
    public var topic: String
    /// Messages with the same key go to the same partition, in order.
    public var key: [UInt8]?
    public var value: [UInt8]
    /// A fixed partition; `nil` lets the partitioner choose by key.
    public var partition: Int32?
    public var headers: [KafkaHeader]

    public init(
        topic: String,
        key: [UInt8]? = nil,
        value: [UInt8],
        partition: Int32? = nil,
        headers: [KafkaHeader] = []
    ) {
        self.topic = topic
        self.key = key
        self.value = value
        self.partition = partition
        self.headers = headers
    }

    public init(topic: String, key: String?, value: some Sequence<UInt8>, headers: [KafkaHeader] = []) {
        self.init(topic: topic, key: key.map { Array($0.utf8) }, value: Array(value), headers: headers)
    }
}

/// A Kafka record header.
public struct KafkaHeader: Sendable, Hashable {
    public var name: String
    public var value: [UInt8]

    public init(name: String, value: [UInt8]) {
        self.name = name
        self.value = value
    }

    public init(name: String, value: String) {
        self.init(name: name, value: Array(value.utf8))
    }
}

/// Where the broker stored a message.
public struct KafkaDeliveryReport: Sendable, Hashable {
    public let topic: String
    public let partition: Int32
    /// The offset the broker assigned; `nil` when librdkafka could not learn it (an
    /// idempotent retry after a lost acknowledgement).
    public let offset: Int64?
}
