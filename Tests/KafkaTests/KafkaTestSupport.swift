import EmbeddedKafka
import Foundation
import Kafka
import Logging
import PipelineTestSupport
import Testing

/// Shared helpers for the Kafka integration suites: a Kafka per test (the embedded cluster, or a
/// Tansu broker when `PUSHFLEET_TEST_KAFKA=tansu`), unique topic and group names, and the path
/// of the `kafka-probe` executable built next to the tests.
enum KafkaTestSupport {
    /// The Kafka the suites run on (`PUSHFLEET_TEST_KAFKA`).
    static let kind = LocalKafka.Kind.fromEnvironment()

    /// A fresh Kafka of ``kind`` for one test; `brokers` counts the embedded cluster's brokers.
    static func start(brokers: Int32) async throws -> LocalKafka {
        try await LocalKafka.start(kind, brokers: brokers, logger: logger)
    }

    static let logger: Logger = {
        var logger = Logger(label: "kafka-tests")
        logger.logLevel = .warning
        return logger
    }()

    /// Polls a condition until it holds or the deadline passes (then records an issue and
    /// throws). The condition is the thing the test needs (a file's content, a committed offset,
    /// an assignment), never a guess at elapsed time.
    static func waitUntil(
        _ what: String, timeout: Duration = .seconds(60), every interval: Duration = .milliseconds(10),
        _ condition: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out waiting until \(what)")
                throw CancellationError()
            }
            try await Task.sleep(for: interval)
        }
    }

    /// A consumer whose librdkafka group log (`debug: cgrp`, every state change of its group
    /// membership) is captured, with its own log lines.
    static func consumerWithGroupLog(_ configuration: KafkaConsumerConfiguration, label: String) throws -> (KafkaConsumer, LogCapture) {
        var traced = configuration
        traced.properties["debug"] = "cgrp"
        let capture = LogCapture()
        var logger = Logger(label: label) { CapturingLogHandler(label: $0, capture: capture) }
        logger.logLevel = .trace
        return (try KafkaConsumer(configuration: traced, logger: logger), capture)
    }

    static func uniqueName(_ prefix: String) -> String {
        "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    static func producer(_ kafka: LocalKafka, lingerMilliseconds: Int = 1) throws -> KafkaProducer {
        try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: kafka.bootstrapServers, lingerMilliseconds: lingerMilliseconds),
            logger: logger)
    }

    static func message(topic: String, index: Int) -> KafkaProducerMessage {
        KafkaProducerMessage(topic: topic, key: "key-\(index)", value: Array("value-\(index)".utf8))
    }

    /// A new topic of `partitions` partitions holding messages `0..<count` (``message(topic:index:)``).
    static func topic(
        _ prefix: String, partitions: Int32 = 1, messages count: Int, in kafka: LocalKafka
    ) async throws -> String {
        let topic = uniqueName(prefix)
        try await kafka.createTopic(topic, partitions: partitions)
        let producer = try producer(kafka)
        _ = try await producer.send((0..<count).map { message(topic: topic, index: $0) })
        await producer.close()
        return topic
    }

    /// How many messages each partition of `topic` holds: the offset a marker message gets when
    /// appended to each partition (so the topic holds one more per partition afterwards).
    /// Watermarks would be simpler, but Tansu 0.6.0 answers ListOffsets(latest) with the first
    /// offset of the partition's last batch + 1, short of the end after any batch of more than one
    /// message; the offset a new message is given is right on both brokers.
    static func storedCounts(topic: String, partitions: Int32, in kafka: LocalKafka) async throws -> [Int32: Int64] {
        let producer = try producer(kafka)
        let reports = try await producer.send((0..<partitions).map { KafkaProducerMessage(topic: topic, value: [0], partition: $0) })
        await producer.close()
        var counts: [Int32: Int64] = [:]
        for report in reports {
            counts[report.partition] = try #require(report.offset, "the broker told the marker's offset")
        }
        return counts
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
