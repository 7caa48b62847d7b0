public import Kafka
public import Logging
public import PushConfiguration

extension KafkaSettings {
    /// An idempotent producer for these settings (every `kafka.properties` passed through).
    ///
    /// - Throws: `KafkaError` when librdkafka refuses the configuration.
    public func makeProducer(clientID: String, logger: Logger) throws -> KafkaProducer {
        try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: bootstrapServers, clientID: clientID, properties: KafkaConfigurationProperties(properties)),
            logger: logger)
    }
}
