public import Kafka
public import Logging
public import PushConfiguration

extension KafkaSettings {
    /// An idempotent producer for these settings (every `kafka.properties` passed through).
    /// Every process that talks to Kafka makes one at start, so this is where a configuration
    /// that turns TLS checks off is warned about.
    ///
    /// - Throws: `KafkaError` when librdkafka refuses the configuration.
    public func makeProducer(clientID: String, logger: Logger) throws -> KafkaProducer {
        let off = tlsChecksTurnedOff
        if !off.isEmpty {
            logger.warning(
                "the Kafka brokers' TLS certificates are not fully checked: anyone between this process and the brokers can read and change jobs",
                metadata: ["kafka.properties": "\(off.joined(separator: ", "))"])
        }
        return try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: bootstrapServers, clientID: clientID, properties: KafkaConfigurationProperties(properties)),
            logger: logger)
    }
}
