import PushConfiguration
import Testing

@Suite struct ExampleYAMLTests {
    @Test func exampleParsesWithTheDocumentedValues() throws {
        let configuration = try PushFleetConfiguration.parse(
            yaml: PushFleetConfiguration.exampleYAML, baseDirectory: "/etc/pushfleet", environment: [:])
        #expect(
            configuration.kafka
                == KafkaSettings(
                    bootstrapServers: "127.0.0.1:9092", properties: ["security.protocol": "SASL_SSL"]))
        #expect(configuration.redis == RedisSettings())
        #expect(configuration.apns == APNsSettings(endpoint: APNsEndpoint(host: "127.0.0.1", port: 2197), caFile: "/path/ca.pem"))
        #expect(configuration.registry == RegistrySettings())
        #expect(configuration.worker == WorkerSettings())
        #expect(configuration.resend == ResendSettings())
        #expect(configuration.metrics == MetricsSettings())
        #expect(configuration.jobs == JobsSettings())
        #expect(configuration.jobs.recallWindow == .seconds(24 * 3600))
        #expect(
            configuration.apps == [
                "news": AppSettings(
                    id: "news", bundleID: "com.example.news",
                    auth: .token(teamID: "ABCDE12345", keyID: "KEY1234567", keyFile: "/keys/AuthKey.p8"))
            ])
    }

    @Test func exampleMentionsEveryKey() {
        for key in [
            "bootstrap-servers", "group-prefix", "properties", "host", "port", "username", "password", "password-file",
            "database", "pool-size", "endpoint", "ca-file", "connections-per-pool", "streams-per-connection", "request-timeout-ms", "event-loops",
            "credential-suspension-seconds",
            "shards", "recall-window-hours",
            "chunk-size", "chunks-in-flight", "expansions-in-flight", "notifications-in-flight", "permit-block", "resend-poll-ms",
            "settle-patience-ms",
            "max-attempts", "base-delay-ms", "max-delay-ms", "max-age-seconds", "lease-ms", "bundle-id",
            "environments", "token", "team-id", "key-id", "key-file", "certificate", "certificate-file", "pkcs12",
            "passphrase-file", "rate-per-second", "burst", "sleep-after", "sleep-ms", "time-zone",
            "topics", "partitions", "jobs", "deliveries", "feedback", "dead-letters", "replication-factor", "min-insync-replicas",
        ] {
            #expect(PushFleetConfiguration.exampleYAML.contains("\(key):"), "\(key)")
        }
    }
}
