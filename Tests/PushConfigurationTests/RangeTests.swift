import Foundation
import PushConfiguration
import Testing

@Suite struct RangeTests {
    /// (section, key, bad value, expected message fragment)
    static let sectionCases: [(String, String, String, String)] = [
        ("redis", "port", "0", "between 1 and 65535, got 0"),
        ("redis", "port", "65536", "between 1 and 65535, got 65536"),
        ("redis", "database", "-1", "at least 0, got -1"),
        ("redis", "pool-size", "0", "at least 1, got 0"),
        ("redis", "host", "\"\"", "must not be empty"),
        ("apns", "port", "444", "must be 443 or 2197, got 444"),
        ("apns", "port", "0", "between 1 and 65535"),
        ("apns", "connections-per-pool", "0", "at least 1, got 0"),
        ("apns", "event-loops", "0", "at least 1, got 0"),
        ("apns", "streams-per-connection", "0", "between 1 and 1000, got 0"),
        ("apns", "streams-per-connection", "1001", "between 1 and 1000, got 1001"),
        ("apns", "request-timeout-ms", "0", "at least 1, got 0"),
        ("apns", "credential-suspension-seconds", "0", "at least 1, got 0"),
        ("registry", "shards", "0", "between 1 and 2048, got 0"),
        ("registry", "shards", "2049", "between 1 and 2048, got 2049"),
        ("worker", "chunk-size", "0", "between 1 and 1000, got 0"),
        ("worker", "chunk-size", "1001", "between 1 and 1000, got 1001"),
        ("worker", "chunks-in-flight", "0", "at least 1"),
        ("worker", "expansions-in-flight", "0", "at least 1"),
        ("worker", "notifications-in-flight", "0", "at least 1"),
        ("worker", "permit-block", "0", "at least 1"),
        ("worker", "resend-poll-ms", "0", "at least 1"),
        ("worker", "settle-patience-ms", "0", "at least 1"),
        ("resend", "max-attempts", "0", "at least 1"),
        ("resend", "base-delay-ms", "-1", "at least 0, got -1"),
        ("resend", "max-age-seconds", "0", "at least 1"),
        ("resend", "lease-ms", "0", "at least 1"),
        ("jobs", "recall-window-hours", "0", "between 1 and 168, got 0"),
        ("jobs", "recall-window-hours", "169", "between 1 and 168, got 169"),
        ("metrics", "port", "-1", "between 0 and 65535, got -1"),
        ("metrics", "port", "65536", "between 0 and 65535, got 65536"),
    ]

    @Test(arguments: sectionCases)
    func sectionValueOutOfRangeIsRejectedWithItsPath(section: String, key: String, value: String, message: String) throws {
        let error = try #require(parseError(withSection(section, key, value)))
        #expect(error.key == "\(section).\(key)")
        #expect(error.message.contains(message), "\(error)")
        #expect(error.line == 2)
        #expect(error.description == "\(section).\(key): \(error.message) (line 2)")
    }

    static let appCases: [(String, String, String)] = [
        ("rate-per-second", "-1", "at least 0, got -1"),
        ("rate-per-second", "-0.5", "at least 0, got -0.5"),
        ("rate-per-second", ".inf", "finite"),
        ("rate-per-second", ".nan", "finite"),
        ("burst", "0", "at least 1, got 0"),
        ("sleep-after", "-1", "at least 0, got -1"),
        ("sleep-ms", "-1", "at least 0, got -1"),
        ("connections-per-pool", "0", "at least 1, got 0"),
        ("environments", "[]", "at least one environment"),
        ("environments", "[sandbox, staging]", "'staging' is not an environment"),
        ("environments", "[sandbox, sandbox]", "more than once"),
    ]

    @Test(arguments: appCases)
    func appValueOutOfRangeIsRejectedWithItsPath(key: String, value: String, message: String) throws {
        let error = try #require(parseError(withAppKey(key, value)))
        #expect(error.key == "apps.news.\(key)")
        #expect(error.message.contains(message), "\(error)")
        #expect(error.line == 8)
    }

    @Test func boundaryValuesAreAccepted() throws {
        let configuration = try parse(
            """
            redis: {port: 65535, database: 0, pool-size: 1}
            apns: {port: 2197, connections-per-pool: 1, request-timeout-ms: 1}
            registry: {shards: 1}
            worker: {chunk-size: 1000}
            resend: {base-delay-ms: 5000, max-delay-ms: 5000}
            metrics: {port: 65535}
            """ + "\n" + minimalYAML + "    burst: 1\n    rate-per-second: 0.0\n")
        #expect(configuration.redis.port == 65535)
        #expect(configuration.registry.shards == 1)
        #expect(configuration.resend.maxDelay == .seconds(5))
        #expect(configuration.apps["news"]?.burst == 1)
    }

    @Test func maxDelayBelowBaseDelayIsRejected() throws {
        let error = try #require(parseError("resend:\n  base-delay-ms: 1000\n  max-delay-ms: 999\n" + minimalYAML))
        #expect(error.key == "resend.max-delay-ms")
        #expect(error.message.contains("resend.base-delay-ms"))
        #expect(error.line == 3)
        // A large base delay with the default maximum is caught too.
        let defaulted = try #require(parseError(withSection("resend", "base-delay-ms", "400000")))
        #expect(defaulted.key == "resend.max-delay-ms")
    }

    @Test func endpointPortIsChecked() throws {
        let error = try #require(parseError("apns:\n  endpoint: {host: sim, port: 0}\n" + minimalYAML))
        #expect(error.key == "apns.endpoint.port")
        let missingHost = try #require(parseError("apns:\n  endpoint: {port: 2197}\n" + minimalYAML))
        #expect(missingHost.key == "apns.endpoint.host")
        #expect(missingHost.message == "is required")
    }

    @Test func requiredKafkaBootstrapServers() throws {
        let missing = try #require(parseError("kafka: {group-prefix: x}\napps: {a: {bundle-id: b, auth: {pkcs12: {file: f}}}}"))
        #expect(missing.key == "kafka.bootstrap-servers")
        #expect(missing.message == "is required")
        let empty = try #require(parseError(minimalYAML.replacingOccurrences(of: "\"broker:9092\"", with: "\"  \"")))
        #expect(empty.key == "kafka.bootstrap-servers")
        #expect(empty.message == "must not be empty")
        let noKafka = try #require(parseError("apps: {a: {bundle-id: b, auth: {pkcs12: {file: f}}}}"))
        #expect(noKafka.key == "kafka.bootstrap-servers")
    }

    @Test func kafkaGroupMembershipSettings() throws {
        func kafka(_ line: String) -> String {
            minimalYAML.replacingOccurrences(of: "bootstrap-servers: \"broker:9092\"", with: "bootstrap-servers: \"broker:9092\"\n  \(line)")
        }
        let strategy = try #require(parseError(kafka("assignment-strategy: sticky")))
        #expect(strategy.key == "kafka.assignment-strategy")
        #expect(strategy.message.contains("cooperative-sticky"))
        let instance = try #require(parseError(kafka("group-instance-id: \"pod 1\"")))
        #expect(instance.key == "kafka.group-instance-id")
        let timeout = try #require(parseError(kafka("session-timeout-ms: 500")))
        #expect(timeout.key == "kafka.session-timeout-ms")
        let eager = try parse(kafka("assignment-strategy: range,roundrobin\n  group-instance-id: worker-0\n  session-timeout-ms: 45000"))
        #expect(eager.kafka.assignmentStrategy == "range,roundrobin")
        #expect(eager.kafka.groupInstanceID == "worker-0")
        #expect(eager.kafka.sessionTimeoutMilliseconds == 45_000)
    }

    @Test func kafkaTopicLayout() throws {
        func kafka(_ line: String) -> String {
            minimalYAML.replacingOccurrences(of: "bootstrap-servers: \"broker:9092\"", with: "bootstrap-servers: \"broker:9092\"\n  \(line)")
        }
        #expect(
            try parse(minimalYAML).kafka.topics
                == KafkaTopicLayout(
                    jobsPartitions: 12, deliveriesPartitions: 48, feedbackPartitions: 6, deadLetterPartitions: 6))
        let layout = try parse(
            kafka("topics: {partitions: {deliveries: 96, dead-letters: 3}, replication-factor: 3, min-insync-replicas: 2}"),
            environment: ["PUSHFLEET__KAFKA__TOPICS__PARTITIONS__JOBS": "24"]
        ).kafka.topics
        #expect(
            layout
                == KafkaTopicLayout(
                    jobsPartitions: 24, deliveriesPartitions: 96, feedbackPartitions: 6, deadLetterPartitions: 3,
                    replicationFactor: 3, minInSyncReplicas: 2))

        let none = try #require(parseError(kafka("topics: {partitions: {deliveries: 0}}")))
        #expect(none.key == "kafka.topics.partitions.deliveries")
        let unknown = try #require(parseError(kafka("topics: {partitions: {delivery: 8}}")))
        #expect(unknown.key == "kafka.topics.partitions.delivery")
        let inSync = try #require(parseError(kafka("topics: {replication-factor: 2, min-insync-replicas: 3}")))
        #expect(inSync.key == "kafka.topics.min-insync-replicas")
        #expect(inSync.message.contains("kafka.topics.replication-factor"))
    }

    @Test func appsAreRequired() throws {
        let missing = try #require(parseError("kafka: {bootstrap-servers: k}"))
        #expect(missing.key == "apps")
        #expect(missing.message.contains("at least one app"))
        let empty = try #require(parseError("kafka: {bootstrap-servers: k}\napps: {}"))
        #expect(empty.key == "apps")
        #expect(empty.line == 2)
    }

    @Test(arguments: ["bad id", "a/b", String(repeating: "x", count: 65), "ünïcode"])
    func invalidAppIDsAreRejected(id: String) throws {
        let yaml = minimalYAML.replacingOccurrences(of: "  news:", with: "  \"\(id)\":")
        let error = try #require(parseError(yaml))
        #expect(error.key == "apps.\(id)")
        #expect(error.message.contains("app id"))
        #expect(error.line == 4)
    }

    @Test func appIDOf64CharactersIsAccepted() throws {
        let id = "A.b_c-" + String(repeating: "9", count: 58)
        let configuration = try parse(minimalYAML.replacingOccurrences(of: "  news:", with: "  \(id):"))
        #expect(configuration.apps[id]?.id == id)
    }

    @Test func appRequiresBundleID() throws {
        let error = try #require(parseError(minimalYAML.replacingOccurrences(of: "    bundle-id: com.example.news\n", with: "")))
        #expect(error.key == "apps.news.bundle-id")
        #expect(error.message == "is required")
        #expect(error.line == 5)
    }

    @Test(arguments: ["ABCDE1234", "ABCDE123456", "abcde12345", "ABCDE-2345"])
    func teamAndKeyIDsMustBeTenUppercaseAlphanumerics(id: String) throws {
        let team = try #require(parseError(minimalYAML.replacingOccurrences(of: "ABCDE12345", with: id)))
        #expect(team.key == "apps.news.auth.token.team-id")
        let key = try #require(parseError(minimalYAML.replacingOccurrences(of: "KEY1234567", with: id)))
        #expect(key.key == "apps.news.auth.token.key-id")
        #expect(key.line == 7)
    }
}
