import APNsCore
import ArgumentParser
import Foundation
import Kafka
import Logging
import PushCore
import Redis

/// `pushfleet demo`: runs PushFleet on the embedded stack (librdkafka's mock cluster in process
/// and a local `redis-server`), end to end as far as the pipeline goes today: jobs are published
/// to `push.jobs`, consumed by a consumer group, validated, recorded in Redis or dead-lettered with
/// the reason, and committed. It checks its own figures against Kafka and Redis and exits 1 if
/// they disagree.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run PushFleet on the embedded stack (embedded Kafka, a local redis-server).")

    @Option(help: "Valid jobs to publish (three malformed ones are added).")
    var jobs = 12

    @Option(help: "Brokers of the embedded Kafka cluster.")
    var brokers: Int32 = 1

    @Option(help: "Log level for the components (trace, debug, info, notice, warning, error).")
    var logLevel: String = "warning"

    func run() async throws {
        var logger = Logger(label: "pushfleet.demo")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .warning

        say("starting the embedded Kafka cluster (\(brokers) broker\(brokers == 1 ? "" : "s"))")
        let cluster = try EmbeddedKafkaCluster(brokers: brokers, logger: logger)
        try cluster.createTopic(PushTopic.jobs, partitions: 3)
        try cluster.createTopic(PushTopic.deadLetters, partitions: 1)
        detail("bootstrap servers \(cluster.bootstrapServers); topics \(PushTopic.jobs) (3 partitions), \(PushTopic.deadLetters)")

        say("starting redis-server")
        let redisServer = try await LocalRedisServer.start()
        detail("listening on \(redisServer.host):\(redisServer.port), data in \(redisServer.directory.path)")
        let redis = RedisClient(configuration: redisServer.configuration, logger: logger)

        let outcome: Result<DemoReport, any Error>
        do {
            outcome = .success(try await runPipeline(cluster: cluster, redis: redis, logger: logger))
        } catch {
            outcome = .failure(error)
        }
        await redis.shutdown()
        await redisServer.stop()
        detail("redis-server stopped")

        let report = try outcome.get()
        print(report.summary)
        guard report.isConsistent else {
            print("✗ the figures disagree with what Kafka and Redis hold")
            throw ExitCode.failure
        }
        print("✓ every job has a final outcome and its offset is committed")
    }

    private func runPipeline(cluster: EmbeddedKafkaCluster, redis: RedisClient, logger: Logger) async throws -> DemoReport {
        let documents = DemoJobs.make(count: jobs)
        say("publishing \(documents.count) jobs to \(PushTopic.jobs) (idempotent producer, confirmed delivery)")
        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: logger)
        let reports = try await producer.send(
            documents.map { KafkaProducerMessage(topic: PushTopic.jobs, key: Array($0.key.utf8), value: $0.bytes) })
        for (document, report) in zip(documents, reports) {
            detail("\(document.key) → partition \(report.partition) offset \(report.offset.map(String.init) ?? "?")")
        }

        let group = "pushfleet-demo"
        say("consuming \(PushTopic.jobs) in consumer group \(group)")
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: cluster.bootstrapServers, groupID: group, topics: [PushTopic.jobs]),
            logger: logger)
        var report = DemoReport(published: documents.count)
        for await message in consumer.messages {
            let key = String(decoding: message.key ?? [], as: UTF8.self)
            switch Result(catching: { () throws(PushJobValidationError) in try PushJob.decodeAndValidate(from: Data(message.value)) }) {
            case .success(let job):
                let id = job.id ?? key
                _ = try await redis.pipeline([
                    [
                        "HSET", .string("pushfleet:demo:job:{\(id)}"), "app", .string(job.app),
                        "environment", .string(job.environment.rawValue), "audience", .string(job.audience.kind),
                        "payload-bytes", .integer(job.notification.byteCount),
                        "partition", .integer(Int(message.partition)), "offset", .integer(Int(message.offset)),
                    ],
                    ["SADD", "pushfleet:demo:jobs", .string(id)],
                ])
                report.accepted += 1
                detail("✓ \(id): \(job.app) \(job.environment.rawValue), audience \(job.audience.kind), payload \(job.notification.byteCount) B → recorded in Redis")
            case .failure(let error):
                _ = try await producer.send(
                    KafkaProducerMessage(
                        topic: PushTopic.deadLetters, key: message.key, value: message.value,
                        headers: [
                            KafkaHeader(name: "reason", value: error.message),
                            KafkaHeader(name: "field", value: error.field),
                            KafkaHeader(name: "code", value: error.code.rawValue),
                            KafkaHeader(name: "source", value: "\(message.topic)/\(message.partition)/\(message.offset)"),
                        ]))
                report.deadLettered += 1
                detail("✗ \(key) → \(PushTopic.deadLetters): \(error.field.isEmpty ? "$" : error.field): \(error.message)")
            }
            consumer.markProcessed(message)
            if report.accepted + report.deadLettered == documents.count { break }
        }
        await consumer.close()
        await producer.close()

        say("checking Kafka and Redis")
        let admin = try KafkaAdmin(bootstrapServers: cluster.bootstrapServers, logger: logger)
        let end = try await admin.highWatermarks(topic: PushTopic.jobs)
        let committed = try await admin.committedOffsets(group: group, topic: PushTopic.jobs)
        report.committedToEnd = committed == end
        report.deadLetterTopicCount = Int(try await admin.highWatermarks(topic: PushTopic.deadLetters).values.reduce(0, +))
        report.redisJobCount = Int(try await redis.send("SCARD", "pushfleet:demo:jobs").int ?? -1)
        return report
    }

    private func say(_ text: String) { print("▸ \(text)") }
    private func detail(_ text: String) { print("    \(text)") }
}

/// What the demo did, and whether Kafka and Redis agree with it.
struct DemoReport {
    let published: Int
    var accepted = 0
    var deadLettered = 0
    var committedToEnd = false
    var deadLetterTopicCount = 0
    var redisJobCount = 0

    var isConsistent: Bool {
        committedToEnd && accepted + deadLettered == published && deadLetterTopicCount == deadLettered
            && redisJobCount == accepted
    }

    var summary: String {
        """

        PushFleet demo
          jobs published to \(PushTopic.jobs)      \(published)
          valid, recorded in Redis          \(accepted)  (Redis holds \(redisJobCount))
          dead-lettered with a reason       \(deadLettered)  (\(PushTopic.deadLetters) holds \(deadLetterTopicCount))
          offsets committed to the end      \(committedToEnd ? "yes" : "no")
        """
    }
}
