/// A message fetched by a ``KafkaConsumer``. Tell the consumer when it is processed with
/// ``KafkaConsumer/markProcessed(_:)``; only then can its offset be committed.
public struct KafkaConsumerMessage: Sendable, Hashable {
    public let topic: String
    public let partition: Int32
    public let offset: Int64
    public let key: [UInt8]?
    public let value: [UInt8]
    public let headers: [KafkaHeader]
    /// Milliseconds since the epoch, as the producer or broker stamped it.
    public let timestampMilliseconds: Int64?
    /// The assignment epoch the message was fetched in.
    let epoch: UInt64

    public var topicPartition: KafkaTopicPartition { KafkaTopicPartition(topic: topic, partition: partition) }

    func stamped(epoch: UInt64) -> KafkaConsumerMessage {
        KafkaConsumerMessage(
            topic: topic, partition: partition, offset: offset, key: key, value: value, headers: headers,
            timestampMilliseconds: timestampMilliseconds, epoch: epoch)
    }
}

/// A change of a consumer's partitions, reported to the rebalance handler.
public enum KafkaRebalanceEvent: Sendable, Hashable {
    /// These partitions are now this consumer's.
    case assigned([KafkaTopicPartition])
    /// These partitions were taken away; what was processed was committed first.
    case revoked([KafkaTopicPartition])
}
