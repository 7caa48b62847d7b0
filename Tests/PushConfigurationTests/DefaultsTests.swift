import APNsCore
import PushConfiguration
import Testing

@Suite struct DefaultsTests {
    @Test func minimalConfigurationGetsEveryDefault() throws {
        let configuration = try parse(minimalYAML)
        #expect(configuration.kafka == KafkaSettings(bootstrapServers: "broker:9092"))
        #expect(configuration.kafka.groupPrefix == "pushfleet")
        #expect(configuration.kafka.assignmentStrategy == "cooperative-sticky")
        #expect(configuration.kafka.groupInstanceID == nil)
        #expect(configuration.kafka.sessionTimeoutMilliseconds == 6_000)
        #expect(configuration.kafka.properties.isEmpty)
        #expect(configuration.kafka.expandGroup == "pushfleet.expand")
        #expect(configuration.kafka.sendGroup == "pushfleet.send")
        #expect(configuration.kafka.feedbackGroup == "pushfleet.feedback")

        #expect(configuration.redis == RedisSettings())
        #expect(configuration.redis.host == "127.0.0.1")
        #expect(configuration.redis.port == 6379)
        #expect(configuration.redis.username == nil)
        #expect(configuration.redis.password == nil)
        #expect(configuration.redis.passwordFile == nil)
        #expect(configuration.redis.database == 0)
        #expect(configuration.redis.poolSize == 4)

        #expect(configuration.apns == APNsSettings())
        #expect(configuration.apns.endpoint == nil)
        #expect(configuration.apns.caFile == nil)
        #expect(configuration.apns.port == 443)
        #expect(configuration.apns.connectionsPerPool == 128)
        #expect(configuration.apns.minConnectionsPerPool == 1)
        #expect(configuration.apns.streamsPerConnection == 1000)
        #expect(configuration.apns.requestTimeout == .seconds(10))
        #expect(configuration.apns.credentialSuspension == .seconds(60))

        #expect(configuration.registry.shards == 16)
        #expect(
            configuration.worker
                == WorkerSettings(
                    chunkSize: 1000, chunksInFlight: 32, expansionsInFlight: 1, notificationsInFlight: 32_000, permitBlock: 100,
                    resendPollInterval: .milliseconds(200), settlePatience: .milliseconds(30)))
        #expect(
            configuration.resend
                == ResendSettings(
                    maxAttempts: 5, baseDelay: .seconds(1), maxDelay: .seconds(300), maxAge: .seconds(3600),
                    lease: .seconds(30)))
        #expect(configuration.metrics.port == nil)

        #expect(configuration.apps.count == 1)
        let news = try #require(configuration.apps["news"])
        #expect(news.id == "news")
        #expect(news.bundleID == "com.example.news")
        #expect(news.environments == [.sandbox, .production])
        #expect(news.auth == .token(teamID: "ABCDE12345", keyID: "KEY1234567", keyFile: "/etc/pushfleet/AuthKey.p8"))
        #expect(news.ratePerSecond == 0)
        #expect(news.burst == 1)
        #expect(news.sleepAfter == 0)
        #expect(news.sleepMilliseconds == 0)
        #expect(news.connectionsPerPool == nil)
        #expect(configuration.connectionsPerPool(for: news) == 128)
    }

    @Test func explicitValuesAreUsed() throws {
        let configuration = try parse(
            """
            kafka:
              bootstrap-servers: a:1,b:2
              group-prefix: fleet
              properties:
                security.protocol: SASL_SSL
                fetch.max.bytes: 1048576
                enable.auto.commit: false
                socket.timeout.ms: 1_000
                ratio: 0.5
                dropped: null
            redis: {host: redis.local, port: 6380, username: pusher, password: hunter2, database: 3, pool-size: 9}
            apns:
              endpoint: {host: sim.local, port: 2197}
              ca-file: ca.pem
              port: 2197
              connections-per-pool: 5
              min-connections-per-pool: 2
              streams-per-connection: 250
              request-timeout-ms: 2500
              event-loops: 3
              credential-suspension-seconds: 15
            registry: {shards: 2048}
            worker: {chunk-size: 1, chunks-in-flight: 2, expansions-in-flight: 6, notifications-in-flight: 3, permit-block: 4, resend-poll-ms: 5, settle-patience-ms: 7}
            resend: {max-attempts: 1, base-delay-ms: 0, max-delay-ms: 0, max-age-seconds: 1, lease-ms: 1}
            jobs: {recall-window-hours: 48}
            metrics: {port: 0}
            apps:
              news:
                bundle-id: com.example.news
                environments: [production]
                auth: {certificate: {certificate-file: /abs/cert.pem, key-file: key.pem}}
                rate-per-second: 12.5
                sleep-after: 100
                sleep-ms: 250
                connections-per-pool: 7
              sports_v2:
                bundle-id: com.example.sports
                environments: [production, sandbox]
                auth: {pkcs12: {file: id.p12}}
                rate-per-second: 500
                burst: 50
            """)
        #expect(configuration.kafka.bootstrapServers == "a:1,b:2")
        #expect(configuration.kafka.groupPrefix == "fleet")
        #expect(configuration.kafka.sendGroup == "fleet.send")
        #expect(
            configuration.kafka.properties == [
                "security.protocol": "SASL_SSL", "fetch.max.bytes": "1048576", "enable.auto.commit": "false",
                "socket.timeout.ms": "1000", "ratio": "0.5",
            ])
        #expect(configuration.redis.host == "redis.local")
        #expect(configuration.redis.port == 6380)
        #expect(configuration.redis.username == "pusher")
        #expect(configuration.redis.password == "hunter2")
        #expect(configuration.redis.database == 3)
        #expect(configuration.redis.poolSize == 9)
        var apns = APNsSettings(
            endpoint: APNsEndpoint(host: "sim.local", port: 2197), caFile: "/etc/pushfleet/ca.pem", port: 2197,
            connectionsPerPool: 5, minConnectionsPerPool: 2, streamsPerConnection: 250, requestTimeout: .milliseconds(2500), eventLoops: 3)
        apns.credentialSuspension = .seconds(15)
        #expect(configuration.apns == apns)
        #expect(configuration.registry.shards == 2048)
        #expect(
            configuration.worker
                == WorkerSettings(
                    chunkSize: 1, chunksInFlight: 2, expansionsInFlight: 6, notificationsInFlight: 3, permitBlock: 4,
                    resendPollInterval: .milliseconds(5), settlePatience: .milliseconds(7)))
        #expect(
            configuration.resend
                == ResendSettings(
                    maxAttempts: 1, baseDelay: .zero, maxDelay: .zero, maxAge: .seconds(1), lease: .milliseconds(1)))
        #expect(configuration.metrics.port == 0)
        #expect(configuration.jobs.recallWindow == .seconds(48 * 3600))

        let news = try #require(configuration.apps["news"])
        #expect(news.environments == [.production])
        #expect(news.auth == .certificate(certificateFile: "/abs/cert.pem", keyFile: "/etc/pushfleet/key.pem"))
        #expect(news.ratePerSecond == 12.5)
        #expect(news.burst == 13)
        #expect(news.sleepAfter == 100)
        #expect(news.sleepMilliseconds == 250)
        #expect(news.sleepDuration == .milliseconds(250))
        #expect(configuration.connectionsPerPool(for: news) == 7)

        let sports = try #require(configuration.apps["sports_v2"])
        #expect(sports.id == "sports_v2")
        #expect(sports.environments == [.production, .sandbox])
        #expect(sports.auth == .pkcs12(file: "/etc/pushfleet/id.p12", passphraseFile: nil))
        #expect(sports.ratePerSecond == 500)
        #expect(sports.burst == 50)
    }

    @Test func endpointPortDefaultsTo443() throws {
        let configuration = try parse("apns: {endpoint: {host: sim.local}}\n" + minimalYAML)
        #expect(configuration.apns.endpoint == APNsEndpoint(host: "sim.local", port: 443))
    }

    @Test func nullSectionsAndValuesMeanDefaults() throws {
        let configuration = try parse("redis:\nworker: ~\nregistry: {shards: null}\n" + minimalYAML)
        #expect(configuration.redis == RedisSettings())
        #expect(configuration.worker == WorkerSettings())
        #expect(configuration.registry.shards == 16)
    }

    @Test(arguments: [(0.0, 1), (0.5, 1), (1.0, 1), (1.2, 2), (500.0, 500), (1e300, Int(Int32.max))])
    func burstDefaultsToRateRoundedUp(rate: Double, burst: Int) {
        #expect(AppSettings.defaultBurst(ratePerSecond: rate) == burst)
        let app = AppSettings(id: "a", bundleID: "b", auth: .pkcs12(file: "/f", passphraseFile: nil), ratePerSecond: rate)
        #expect(app.burst == burst)
    }

    @Test func memberwiseInitializersHaveDefaults() {
        let configuration = PushFleetConfiguration(
            kafka: KafkaSettings(bootstrapServers: "k:9092"),
            apps: ["a": AppSettings(id: "a", bundleID: "com.a", auth: .token(teamID: "T", keyID: "K", keyFile: "/k"))])
        #expect(configuration.redis == RedisSettings())
        #expect(configuration.apps["a"]?.environments == APNsEnvironment.allCases)
        #expect(configuration.apps["a"]?.burst == 1)
    }
}

@Suite("APNs event loops")
struct APNsEventLoopsTests {
    @Test("unset: half the cores, at least one; set: as written")
    func effective() {
        #expect(APNsSettings().effectiveEventLoops(cores: 2) == 1)
        #expect(APNsSettings().effectiveEventLoops(cores: 1) == 1)
        #expect(APNsSettings().effectiveEventLoops(cores: 16) == 8)
        #expect(APNsSettings(eventLoops: 4).effectiveEventLoops(cores: 2) == 4)
    }
}
