import Foundation
import Kafka
import Logging

/// Produce and consume throughput through the Kafka wrapper against `kcat`, both on the same
/// embedded cluster in the same run, with 200-byte messages.
struct KafkaBenchmark {
    struct Result: Codable {
        let messages: Int
        let messageBytes: Int
        let partitions: Int32
        let wrapperProducePerSecond: Double
        let kcatProducePerSecond: Double
        let wrapperConsumePerSecond: Double
        let kcatConsumePerSecond: Double
        var produceRatio: Double { wrapperProducePerSecond / kcatProducePerSecond }
        var consumeRatio: Double { wrapperConsumePerSecond / kcatConsumePerSecond }
    }

    let messages: Int
    let partitions: Int32
    let messageBytes = 200
    let logger: Logger

    func run() async throws -> Result {
        let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: logger)
        let wrapperTopic = "bench.wrapper"
        let kcatTopic = "bench.kcat"
        try cluster.createTopic(wrapperTopic, partitions: partitions)
        try cluster.createTopic(kcatTopic, partitions: partitions)
        let payload = Array(repeating: UInt8(ascii: "x"), count: messageBytes - 1)

        // Producing: both idempotent with acks=all and the same linger, each message confirmed.
        let wrapperProduce = try await produceWithWrapper(cluster: cluster, topic: wrapperTopic, payload: payload)
        let kcatProduce = try produceWithKcat(cluster: cluster, topic: kcatTopic, payload: payload)

        // Consuming: each reads the topic it produced, from the beginning, in a consumer group.
        let wrapperConsume = try await consumeWithWrapper(cluster: cluster, topic: wrapperTopic)
        let kcatConsume = try consumeWithKcat(cluster: cluster, topic: kcatTopic)

        return Result(
            messages: messages, messageBytes: messageBytes, partitions: partitions,
            wrapperProducePerSecond: Double(messages) / wrapperProduce.seconds,
            kcatProducePerSecond: Double(messages) / kcatProduce.seconds,
            wrapperConsumePerSecond: Double(messages) / wrapperConsume.seconds,
            kcatConsumePerSecond: Double(messages) / kcatConsume.seconds)
    }

    private var producerProperties: KafkaConfigurationProperties {
        ["linger.ms": "5", "batch.num.messages": "10000", "enable.idempotence": "true", "acks": "all"]
    }

    private func produceWithWrapper(cluster: EmbeddedKafkaCluster, topic: String, payload: [UInt8]) async throws -> Duration {
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: cluster.bootstrapServers, properties: producerProperties),
            logger: logger)
        let batchSize = 10_000
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Int.self) { group in
            var next = 0
            var running = 0
            while next < messages || running > 0 {
                // Keep a few batches in flight, as a producer feeding a topic would.
                while running < 8, next < messages {
                    let range = next..<min(next + batchSize, messages)
                    next = range.upperBound
                    running += 1
                    group.addTask {
                        let batch = range.map { KafkaProducerMessage(topic: topic, key: nil, value: payload + [UInt8(truncatingIfNeeded: $0)]) }
                        return try await producer.send(batch).count
                    }
                }
                _ = try await group.next()
                running -= 1
            }
        }
        let elapsed = ContinuousClock.now - started
        await producer.close()
        return elapsed
    }

    private func produceWithKcat(cluster: EmbeddedKafkaCluster, topic: String, payload: [UInt8]) throws -> Duration {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("kcat-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: input) }
        var line = payload
        line.append(UInt8(ascii: "\n"))
        var data = Data(capacity: messages * line.count)
        for _ in 0..<messages { data.append(contentsOf: line) }
        try data.write(to: input)
        var arguments = ["-P", "-b", cluster.bootstrapServers, "-t", topic, "-l", input.path]
        for (key, value) in producerProperties.values.sorted(by: { $0.key < $1.key }) {
            arguments += ["-X", "\(key)=\(value)"]
        }
        let output = try BenchmarkProcess.run("kcat", arguments)
        guard output.status == 0 else { throw BenchmarkError.referenceFailed("kcat -P", output.standardError) }
        return output.elapsed
    }

    private func consumeWithWrapper(cluster: EmbeddedKafkaCluster, topic: String) async throws -> Duration {
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: cluster.bootstrapServers, groupID: "bench-wrapper", topics: [topic],
                bufferCapacity: 10_000),
            logger: logger)
        let started = ContinuousClock.now
        var count = 0
        for await message in consumer.messages {
            consumer.markProcessed(message)
            count += 1
            if count == messages { break }
        }
        let elapsed = ContinuousClock.now - started
        await consumer.close()
        return elapsed
    }

    private func consumeWithKcat(cluster: EmbeddedKafkaCluster, topic: String) throws -> Duration {
        let output = try BenchmarkProcess.run(
            "kcat", ["-b", cluster.bootstrapServers, "-G", "bench-kcat", "-o", "beginning", "-c", String(messages), "-q", topic])
        guard output.status == 0 else { throw BenchmarkError.referenceFailed("kcat -G", output.standardError) }
        return output.elapsed
    }
}

enum BenchmarkError: Error, CustomStringConvertible {
    case referenceFailed(String, String)
    case missingTool(String)

    var description: String {
        switch self {
        case .referenceFailed(let tool, let error): "\(tool) failed: \(error)"
        case .missingTool(let tool): "\(tool) is not installed"
        }
    }
}
