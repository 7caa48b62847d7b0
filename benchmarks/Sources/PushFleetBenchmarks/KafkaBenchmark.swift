import EmbeddedKafka
import Foundation
import Kafka
import Logging

/// Produce and consume throughput through the Kafka wrapper against `kcat`, both on the same
/// embedded cluster in the same run, with 200-byte messages.
struct KafkaBenchmark {
    /// One round: each side's rate, measured back to back under the same machine load.
    struct Round: Codable {
        let wrapperProducePerSecond: Double
        let kcatProducePerSecond: Double
        let wrapperConsumePerSecond: Double
        let kcatConsumePerSecond: Double
        /// Seconds from subscribing to the first message: mostly joining the group.
        let wrapperFirstMessageSeconds: Double
        /// The same for kcat, from a separate `kcat -c 1` run in a fresh group (process start
        /// included).
        let kcatFirstMessageSeconds: Double
        /// CPU seconds of producing: the producer's and the embedded broker's (which runs in
        /// this process). Steadier than the rates on a shared machine.
        let wrapperProduceCPUSeconds: Double
        let kcatProduceCPUSeconds: Double
    }

    struct Result: Codable {
        let messages: Int
        let messageBytes: Int
        let partitions: Int32
        let rounds: [Round]
        var wrapperProducePerSecond: Double { median(rounds.map(\.wrapperProducePerSecond)) }
        var kcatProducePerSecond: Double { median(rounds.map(\.kcatProducePerSecond)) }
        var wrapperConsumePerSecond: Double { median(rounds.map(\.wrapperConsumePerSecond)) }
        var kcatConsumePerSecond: Double { median(rounds.map(\.kcatConsumePerSecond)) }
        /// Medians of the per-round ratios: each round's two sides saw the same load.
        var produceRatio: Double { median(rounds.map { $0.wrapperProducePerSecond / $0.kcatProducePerSecond }) }
        var consumeRatio: Double { median(rounds.map { $0.wrapperConsumePerSecond / $0.kcatConsumePerSecond }) }
        /// CPU seconds per 100,000 messages produced, producer and embedded broker.
        var wrapperProduceCPUPer100k: Double { median(rounds.map(\.wrapperProduceCPUSeconds)) / Double(messages) * 100_000 }
        var kcatProduceCPUPer100k: Double { median(rounds.map(\.kcatProduceCPUSeconds)) / Double(messages) * 100_000 }
        var wrapperFirstMessageSeconds: Double { median(rounds.map(\.wrapperFirstMessageSeconds)) }
        var kcatFirstMessageSeconds: Double { median(rounds.map(\.kcatFirstMessageSeconds)) }
        /// Seconds from the first message to the last, per round, then the median. kcat's is
        /// its full read less its separate first-message run.
        var wrapperAfterFirstMessageSeconds: Double {
            median(rounds.map { Double(messages) / $0.wrapperConsumePerSecond - $0.wrapperFirstMessageSeconds })
        }
        var kcatAfterFirstMessageSeconds: Double {
            median(rounds.map { Double(messages) / $0.kcatConsumePerSecond - $0.kcatFirstMessageSeconds })
        }

        private func median(_ values: [Double]) -> Double { Statistics.median(values) ?? 0 }
    }

    let messages: Int
    let partitions: Int32
    let rounds: Int
    /// Producer `send` calls of 10,000 messages in flight at once.
    let batchesInFlight: Int
    let messageBytes = 200
    let logger: Logger

    func run() async throws -> Result {
        let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: logger)
        var results: [Round] = []
        for round in 1...rounds {
            progress("round \(round) of \(rounds)")
            results.append(try await runRound(round, cluster: cluster))
        }
        return Result(messages: messages, messageBytes: messageBytes, partitions: partitions, rounds: results)
    }

    private func runRound(_ round: Int, cluster: EmbeddedKafkaCluster) async throws -> Round {
        let wrapperTopic = "bench.wrapper.\(round)"
        let kcatTopic = "bench.kcat.\(round)"
        try cluster.createTopic(wrapperTopic, partitions: partitions)
        try cluster.createTopic(kcatTopic, partitions: partitions)
        let payload = Array(repeating: UInt8(ascii: "x"), count: messageBytes)

        // Producing: both idempotent with acks=all and the same linger, each message confirmed.
        // The side that goes second meets a broker holding one more topic's data, so the order
        // alternates: the wrapper first in odd rounds, kcat first in even ones.
        var wrapperProduce = (elapsed: Duration.zero, cpu: 0.0)
        var kcatProduce = (elapsed: Duration.zero, cpu: 0.0)
        func runWrapper() async throws {
            progress("wrapper produce")
            // Messages are built before the clock and the CPU count start, as kcat's input file
            // is written before its own.
            let batches = wrapperBatches(topic: wrapperTopic, payload: payload)
            let cpuBefore = ResourceUsage.selfCPUSeconds()
            let elapsed = try await produceWithWrapper(cluster: cluster, batches: batches)
            wrapperProduce = (elapsed, ResourceUsage.selfCPUSeconds() - cpuBefore)
        }
        func runKcat() throws {
            progress("kcat produce")
            let input = try writeKcatInput(payload: payload)
            defer { try? FileManager.default.removeItem(at: input) }
            let cpuBefore = ResourceUsage.selfCPUSeconds() + ResourceUsage.childrenCPUSeconds()
            let elapsed = try produceWithKcat(cluster: cluster, topic: kcatTopic, input: input)
            kcatProduce = (elapsed, ResourceUsage.selfCPUSeconds() + ResourceUsage.childrenCPUSeconds() - cpuBefore)
        }
        if round.isMultiple(of: 2) {
            try runKcat()
            try await runWrapper()
        } else {
            try await runWrapper()
            try runKcat()
        }
        // A rate means nothing unless every message is in its topic.
        let admin = try KafkaAdmin(bootstrapServers: cluster.bootstrapServers, logger: logger)
        for topic in [wrapperTopic, kcatTopic] {
            let stored = try await admin.highWatermarks(topic: topic).values.reduce(0, +)
            guard stored == Int64(messages) else {
                throw BenchmarkError.failed("\(topic) holds \(stored) messages after producing \(messages)")
            }
        }

        // Consuming: both read the same topic from the beginning, each in its own group. The
        // embedded broker answers a fetch with the batches as they were produced, so reading
        // topics produced by different producers would compare their batching, not the consumers.
        progress("wrapper consume")
        let wrapperConsume = try await consumeWithWrapper(cluster: cluster, topic: wrapperTopic, group: "bench-wrapper-\(round)")
        progress("kcat first message")
        let kcatFirst = try consumeWithKcat(cluster: cluster, topic: wrapperTopic, group: "bench-kcat-first-\(round)", count: 1)
        progress("kcat consume")
        let kcatConsume = try consumeWithKcat(cluster: cluster, topic: wrapperTopic, group: "bench-kcat-\(round)")

        return Round(
            wrapperProducePerSecond: Double(messages) / wrapperProduce.elapsed.seconds,
            kcatProducePerSecond: Double(messages) / kcatProduce.elapsed.seconds,
            wrapperConsumePerSecond: Double(messages) / wrapperConsume.total.seconds,
            kcatConsumePerSecond: Double(messages) / kcatConsume.seconds,
            wrapperFirstMessageSeconds: wrapperConsume.firstMessage.seconds,
            kcatFirstMessageSeconds: kcatFirst.seconds,
            wrapperProduceCPUSeconds: wrapperProduce.cpu, kcatProduceCPUSeconds: kcatProduce.cpu)
    }

    private var consumerProperties: KafkaConfigurationProperties {
        ["fetch.wait.max.ms": "10"]
    }

    private var producerProperties: KafkaConfigurationProperties {
        ["linger.ms": "5", "batch.num.messages": "10000", "enable.idempotence": "true", "acks": "all"]
    }

    /// The wrapper's messages in send calls of 10,000.
    private func wrapperBatches(topic: String, payload: [UInt8]) -> [[KafkaProducerMessage]] {
        let batchSize = 10_000
        return stride(from: 0, to: messages, by: batchSize).map { first in
            (first..<min(first + batchSize, messages)).map {
                KafkaProducerMessage(topic: topic, key: Array("k\($0)".utf8), value: payload)
            }
        }
    }

    private func produceWithWrapper(cluster: EmbeddedKafkaCluster, batches: [[KafkaProducerMessage]]) async throws -> Duration {
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(
                bootstrapServers: cluster.bootstrapServers, properties: producerProperties),
            logger: logger)
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Int.self) { group in
            var next = 0
            var running = 0
            while next < batches.count || running > 0 {
                // Keep a few batches in flight, as a producer feeding a topic would.
                while running < batchesInFlight, next < batches.count {
                    let batch = batches[next]
                    next += 1
                    running += 1
                    group.addTask { try await producer.send(batch).count }
                }
                _ = try await group.next()
                running -= 1
            }
        }
        let elapsed = ContinuousClock.now - started
        await producer.close()
        return elapsed
    }

    /// kcat's input, one `key<TAB>value` line per message, written before its clock starts (as
    /// the wrapper's messages are built before its own).
    private func writeKcatInput(payload: [UInt8]) throws -> URL {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("kcat-\(UUID().uuidString).txt")
        var data = Data(capacity: messages * (payload.count + 10))
        for index in 0..<messages {
            data.append(contentsOf: Array("k\(index)\t".utf8))
            data.append(contentsOf: payload)
            data.append(UInt8(ascii: "\n"))
        }
        try data.write(to: input)
        return input
    }

    private func produceWithKcat(cluster: EmbeddedKafkaCluster, topic: String, input: URL) throws -> Duration {
        var arguments = ["-P", "-b", cluster.bootstrapServers, "-t", topic, "-K", "\t", "-l", input.path]
        for (key, value) in producerProperties.values.sorted(by: { $0.key < $1.key }) {
            arguments += ["-X", "\(key)=\(value)"]
        }
        let output = try BenchmarkProcess.run("kcat", arguments)
        guard output.status == 0 else { throw BenchmarkError.referenceFailed("kcat -P", output.standardError) }
        return output.elapsed
    }

    /// The time to read every message, and the time to the first (the group join).
    private func consumeWithWrapper(
        cluster: EmbeddedKafkaCluster, topic: String, group: String
    ) async throws -> (total: Duration, firstMessage: Duration) {
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: cluster.bootstrapServers, groupID: group, topics: [topic],
                bufferCapacity: 10_000, properties: consumerProperties),
            logger: logger)
        let started = ContinuousClock.now
        var firstMessage: Duration?
        var count = 0
        for await message in consumer.messages {
            if firstMessage == nil { firstMessage = ContinuousClock.now - started }
            consumer.markProcessed(message)
            count += 1
            if count == messages { break }
        }
        let elapsed = ContinuousClock.now - started
        await consumer.close()
        return (elapsed, firstMessage ?? elapsed)
    }

    private func consumeWithKcat(
        cluster: EmbeddedKafkaCluster, topic: String, group: String, count: Int? = nil
    ) throws -> Duration {
        var arguments = ["-b", cluster.bootstrapServers, "-G", group, "-o", "beginning", "-c", String(count ?? messages), "-q"]
        for (key, value) in consumerProperties.values.sorted(by: { $0.key < $1.key }) {
            arguments += ["-X", "\(key)=\(value)"]
        }
        let output = try BenchmarkProcess.run("kcat", arguments + [topic])
        guard output.status == 0 else { throw BenchmarkError.referenceFailed("kcat -G", output.standardError) }
        return output.elapsed
    }
}

/// Reports a benchmark's phase on standard error, keeping standard output for results.
func progress(_ phase: String) {
    FileHandle.standardError.write(Data("[\(Date())] \(phase)\n".utf8))
}

enum BenchmarkError: Error, CustomStringConvertible {
    case referenceFailed(String, String)
    case failed(String)

    var description: String {
        switch self {
        case .referenceFailed(let tool, let error): "\(tool) failed: \(error)"
        case .failed(let reason): reason
        }
    }
}
