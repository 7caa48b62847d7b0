import EmbeddedKafka
import EmbeddedStack
import Foundation
import Kafka
import PipelineTestSupport
import PushCore
import Testing

/// `pushfleet topics check|create` and a worker's check of the topics at start, as separate
/// processes against an embedded cluster without the pipeline's topics.
@Suite("pushfleet topics, and workers that refuse a cluster without them", .serialized)
struct TopicCommandTests {
    @Test("check lists what is missing; a worker refuses to start; check never creates; then too few partitions, and enough")
    func checkAndRefuse() async throws {
        try await PipelineStack.with { stack in
            let empty = try EmbeddedKafkaCluster(brokers: 1, logger: stack.logger)
            let elsewhere = ["PUSHFLEET__KAFKA__BOOTSTRAP_SERVERS": empty.bootstrapServers]

            let missing = try await CLIProcess.run(["topics", "check", "--config", stack.configurationPath, "--json"], environment: elsewhere)
            #expect(missing.status == 1, "\(missing.standardError)")
            let report = try #require(try JSONValue(parsing: Data(missing.standardOutput.utf8)).objectValue)
            #expect(report["ok"] == false)
            let topics = try #require(report["topics"]?.arrayValue).compactMap(\.objectValue)
            #expect(topics.map { $0["topic"] } == ["push.jobs", "push.deliveries", "push.feedback", "push.dlq", "push.online"])
            #expect(topics.allSatisfy { $0["finding"] == "missing" })

            let worker = try await CLIProcess.run(
                ["worker", "--config", stack.configurationPath, "--log-format", "json", "--log-level", "warning"], environment: elsewhere)
            #expect(worker.status != 0)
            #expect(
                worker.standardError.contains(
                    "push.jobs, push.deliveries, push.feedback, push.dlq, push.online do not exist on \(empty.bootstrapServers)"))
            #expect(worker.standardError.contains("pushfleet topics create"))
            // Its log lines are JSON, the refusal among them.
            let logLines = worker.standardError.split(separator: "\n").filter { $0.hasPrefix("{") }
            let entries = try logLines.map { try #require(try JSONValue(parsing: Data($0.utf8)).objectValue) }
            let refusal = try #require(entries.first { ($0["message"]?.stringValue ?? "").hasPrefix("worker not started") })
            #expect(refusal["level"] == "critical")
            #expect(refusal["label"] == "pushfleet.worker")

            // Neither the check nor the worker created a topic.
            let still = try await CLIProcess.run(["topics", "check", "--config", stack.configurationPath], environment: elsewhere)
            #expect(still.status == 1)
            #expect(
                still.standardOutput.split(separator: "\n").filter { $0.hasPrefix("✗") && $0.contains("missing") }.count == 5,
                "\(still.standardOutput)")

            // The embedded cluster has no controller to create topics (a real one does): the
            // command says what it could not create and why, within its timeout.
            let refused = try await CLIProcess.run(
                ["topics", "create", "--config", stack.configurationPath, "--timeout", "2"], environment: elsewhere)
            #expect(refused.status == 1)
            #expect(
                refused.standardError.contains("creating push.jobs, push.deliveries, push.feedback, push.dlq, push.online failed"),
                "\(refused.standardError)")
            #expect(refused.standardError.contains("controller"), "\(refused.standardError)")
            try empty.createTopic(PushTopic.jobs, partitions: 4)
            try empty.createTopic(PushTopic.deliveries, partitions: 8)
            try empty.createTopic(PushTopic.feedback, partitions: 2)
            try empty.createTopic(PushTopic.deadLetters, partitions: 1)
            try empty.createTopic(PushTopic.online, partitions: 2)
            let small = try await CLIProcess.run(
                ["topics", "check", "--config", stack.configurationPath, "--deliveries-partitions", "16"], environment: elsewhere)
            #expect(small.status == 1)
            #expect(small.standardOutput.contains("✗ push.deliveries: 8 partitions, fewer than the 16 of the layout"), "\(small.standardOutput)")
            #expect(small.standardOutput.contains("✓ push.jobs: 4 partitions, replication factor 1: ok"), "\(small.standardOutput)")
            let enough = try await CLIProcess.run(["topics", "check", "--config", stack.configurationPath], environment: elsewhere)
            #expect(enough.status == 0, "the stack's configuration says kafka.topics as it created them: \(enough.standardOutput)")

            let usage = try await CLIProcess.run(["topics", "check", "--config", stack.configurationPath, "--replication-factor", "0"])
            #expect(usage.status == 64)
            #expect(usage.standardError.contains("--replication-factor must be at least 1"))
        }
    }
}
