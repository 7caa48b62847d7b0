import ArgumentParser
import Kafka
import Logging
import PushConfiguration
import PushCore
import PushJobs

/// `pushfleet topics create|check`: the pipeline's five Kafka topics on an operator's own cluster.
struct TopicsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "topics",
        abstract: "Create the pipeline's Kafka topics, or check that they exist with the configured layout.",
        subcommands: [Create.self, Check.self])

    /// The layout from `kafka.topics`, with flags taking precedence.
    struct LayoutOptions: ParsableArguments {
        @Option(help: "Partitions of push.jobs (default: kafka.topics.partitions.jobs, 12).") var jobsPartitions: Int?
        @Option(help: "Partitions of push.deliveries (default: kafka.topics.partitions.deliveries, 48).") var deliveriesPartitions: Int?
        @Option(help: "Partitions of push.feedback (default: kafka.topics.partitions.feedback, 6).") var feedbackPartitions: Int?
        @Option(help: "Partitions of push.dlq (default: kafka.topics.partitions.dead-letters, 6).") var deadLetterPartitions: Int?
        @Option(help: "Partitions of push.online (default: kafka.topics.partitions.online, 12).") var onlinePartitions: Int?
        @Option(help: "Replicas per partition (default: kafka.topics.replication-factor, else the brokers' default).")
        var replicationFactor: Int?
        @Option(help: "min.insync.replicas of created topics (default: kafka.topics.min-insync-replicas, else the brokers').")
        var minInsyncReplicas: Int?

        func validate() throws {
            for (flag, value) in [
                ("--jobs-partitions", jobsPartitions), ("--deliveries-partitions", deliveriesPartitions),
                ("--feedback-partitions", feedbackPartitions), ("--dead-letter-partitions", deadLetterPartitions),
                ("--online-partitions", onlinePartitions),
                ("--replication-factor", replicationFactor), ("--min-insync-replicas", minInsyncReplicas),
            ] {
                if let value, value < 1 { throw ValidationError("\(flag) must be at least 1, got \(value)") }
            }
        }

        func layout(_ configured: KafkaTopicLayout) throws -> KafkaTopicLayout {
            var layout = configured
            layout.jobsPartitions = jobsPartitions ?? layout.jobsPartitions
            layout.deliveriesPartitions = deliveriesPartitions ?? layout.deliveriesPartitions
            layout.feedbackPartitions = feedbackPartitions ?? layout.feedbackPartitions
            layout.deadLetterPartitions = deadLetterPartitions ?? layout.deadLetterPartitions
            layout.onlinePartitions = onlinePartitions ?? layout.onlinePartitions
            layout.replicationFactor = replicationFactor ?? layout.replicationFactor
            layout.minInSyncReplicas = minInsyncReplicas ?? layout.minInSyncReplicas
            if let replicas = layout.replicationFactor, let inSync = layout.minInSyncReplicas, inSync > replicas {
                throw ValidationError("min.insync.replicas (\(inSync)) must not exceed the replication factor (\(replicas)): no write could succeed")
            }
            return layout
        }
    }

    /// `pushfleet topics check`
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check that the pipeline's topics exist with at least the configured partitions and replicas.",
            discussion: "Exit status: 0 every topic as configured or larger, 1 a topic missing or smaller, 64 usage.")

        @OptionGroup var options: ClientOptions
        @OptionGroup var layoutOptions: LayoutOptions

        func run() async throws {
            let configuration = try options.loadConfiguration()
            let layout = try layoutOptions.layout(configuration.kafka.topics)
            let admin = try configuration.kafka.makeAdmin(logger: TopicsCommand.logger)
            let findings = try await configuration.kafka.auditTopics(admin: admin, layout: layout)
            TopicsCommand.print(findings, json: options.json)
            if findings.contains(where: \.isShortfall) { throw ExitCode(1) }
        }
    }

    /// `pushfleet topics create`
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the pipeline's topics that do not exist yet, then check them all.",
            discussion: """
                Existing topics are left as they are: one with fewer partitions than configured is reported, not \
                grown (adding partitions to push.jobs or push.deliveries moves keys to other partitions; do it with \
                your cluster's tools when no campaign runs). Needs a cluster with a controller (any Apache Kafka \
                cluster; the embedded cluster of `pushfleet demo` creates its own). \
                Exit status: 0 every topic exists as configured or larger, 1 a topic could not be created or is \
                smaller, 64 usage.
                """)

        @OptionGroup var options: ClientOptions
        @OptionGroup var layoutOptions: LayoutOptions
        @Option(help: "How long the cluster's controller may take to create the topics, in seconds.") var timeout = 30

        func validate() throws {
            guard timeout >= 1 else { throw ValidationError("--timeout must be at least 1 second, got \(timeout)") }
        }

        func run() async throws {
            let configuration = try options.loadConfiguration()
            let layout = try layoutOptions.layout(configuration.kafka.topics)
            let admin = try configuration.kafka.makeAdmin(logger: TopicsCommand.logger)
            let before = try await configuration.kafka.auditTopics(admin: admin, layout: layout)
            let missing = TopicAudit.missing(before)
            if !missing.isEmpty {
                let topicConfiguration = layout.minInSyncReplicas.map { ["min.insync.replicas": String($0)] } ?? [:]
                do {
                    try await admin.createTopics(
                        missing.map {
                            KafkaTopicSpecification(
                                name: $0.name, partitions: Int32($0.partitions),
                                replicationFactor: Int32($0.replicationFactor ?? -1),  // -1: the brokers' default
                                configuration: topicConfiguration)
                        }, timeout: .seconds(timeout))
                } catch {
                    printError("creating \(missing.map(\.name).joined(separator: ", ")) failed: \(error)")
                    throw ExitCode(1)
                }
                if !options.json { Swift.print("created \(missing.map(\.name).joined(separator: ", "))") }
            }
            let after = try await configuration.kafka.auditTopics(admin: admin, layout: layout)
            TopicsCommand.print(after, json: options.json, created: missing.map(\.name))
            if after.contains(where: \.isShortfall) { throw ExitCode(1) }
        }
    }

    static var logger: Logger {
        var logger = Logger(label: "pushfleet.topics")
        logger.logLevel = .error
        return logger
    }

    /// One line per finding, or `{"ok": Bool, "created": […], "topics": [{"topic", "finding", "message"}]}`.
    static func print(_ findings: [TopicFinding], json: Bool, created: [String] = []) {
        guard json else {
            for finding in findings { Swift.print(finding.isShortfall ? "✗ \(finding.description)" : "✓ \(finding.description)") }
            return
        }
        let topics: [JSONValue] = findings.map { finding in
            let kind =
                switch finding {
                case .missing: "missing"
                case .fewerPartitions: "fewer-partitions"
                case .fewerReplicas: "fewer-replicas"
                case .sufficient: "ok"
                }
            return ["topic": .string(finding.topic), "finding": .string(kind), "message": .string(finding.description)]
        }
        let value: JSONValue = [
            "ok": .bool(!findings.contains(where: \.isShortfall)), "created": .array(created.map { .string($0) }),
            "topics": .array(topics),
        ]
        Swift.print(String(decoding: value.compactData(), as: UTF8.self))
    }
}
