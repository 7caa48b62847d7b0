import EmbeddedKafka
import Foundation
import Kafka
import Logging

/// Shared helpers for the Kafka integration suites: an embedded cluster per test, unique topic
/// and group names, and the path of the `kafka-probe` executable built next to the tests.
enum KafkaTestSupport {
    static let logger: Logger = {
        var logger = Logger(label: "kafka-tests")
        logger.logLevel = .warning
        return logger
    }()

    static func uniqueName(_ prefix: String) -> String {
        "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    static func producer(_ cluster: EmbeddedKafkaCluster, lingerMilliseconds: Int = 1) throws -> KafkaProducer {
        try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: cluster.bootstrapServers, lingerMilliseconds: lingerMilliseconds),
            logger: logger)
    }

    static func message(topic: String, index: Int) -> KafkaProducerMessage {
        KafkaProducerMessage(topic: topic, key: "key-\(index)", value: Array("value-\(index)".utf8))
    }

    /// A new topic of `partitions` partitions holding messages `0..<count` (``message(topic:index:)``).
    static func topic(
        _ prefix: String, partitions: Int32 = 1, messages count: Int, in cluster: EmbeddedKafkaCluster
    ) async throws -> String {
        let topic = uniqueName(prefix)
        try cluster.createTopic(topic, partitions: partitions)
        let producer = try producer(cluster)
        _ = try await producer.send((0..<count).map { message(topic: topic, index: $0) })
        await producer.close()
        return topic
    }

    /// The directory holding this build's products (`.build/debug`), found from the running test
    /// binary unless `PUSHFLEET_BIN_DIR` names it.
    static var productsDirectory: URL {
        if let directory = ProcessInfo.processInfo.environment["PUSHFLEET_BIN_DIR"] {
            return URL(fileURLWithPath: directory)
        }
        var url = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("kafka-probe").path) {
                return url
            }
        }
        return URL(fileURLWithPath: ".build/debug")
    }
}
