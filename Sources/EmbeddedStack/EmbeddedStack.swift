public import APNsCore
public import APNsSimulator
import Crypto
import EmbeddedKafka
public import Foundation
public import Kafka
import LocalRedis
public import Logging
public import PushConfiguration
import PushCore
public import Redis

/// PushFleet's whole stack on one machine, for `pushfleet demo`, the end-to-end tests and the
/// benchmarks: librdkafka's mock cluster (or a Tansu broker, ``Options/kafka``) with the pipeline's topics, a real `redis-server`, the
/// APNs simulator over HTTP/2 + TLS (trusting a freshly generated signing key), and a
/// configuration file, as operators write it, pointing workers at them. Worker processes join
/// with `pushfleet worker --config <configurationPath>`.
public final class EmbeddedStack: Sendable {
    public static let app = "news"
    public static let bundleID = "com.example.news"
    public static let teamID = "TEAM123456"
    public static let keyID = "KEY1234567"
    /// A second app with its own API key, for cross-app isolation: same team and signing key.
    public static let otherApp = "shop"
    public static let otherBundleID = "com.example.shop"

    /// How to set the stack up.
    public struct Options: Sendable {
        /// Extra YAML lines under `apps.news` (e.g. `rate-per-second: 500`).
        public var appSettings: [String] = []
        /// YAML lines under `resend`; the default retries quickly, for tests and demos.
        public var resendSettings: [String] = ["base-delay-ms: 20", "max-delay-ms: 500"]
        /// YAML lines under `worker`.
        public var workerSettings: [String] = ["chunks-in-flight: 4"]
        /// YAML lines under `breaker` (the campaign circuit breaker); default its defaults.
        public var breakerSettings: [String] = []
        /// More librdkafka properties for the workers (`kafka.properties`), e.g.
        /// ``EmbeddedKafkaCluster/producerPropertiesForInjectedErrors`` for a run that injects
        /// produce errors.
        public var kafkaProperties: [String: String] = [:]
        /// Whether the simulator knows the app's signing key (false: it refuses every request
        /// with InvalidProviderToken).
        public var simulatorTrustsKey = true
        public var jobPartitions: Int32 = 4
        /// The embedded Kafka cluster (the default), or a Tansu broker process: a real
        /// Kafka-protocol broker, which needs a current librdkafka loaded (``TansuBroker``).
        public var kafka: LocalKafka.Kind = .embedded
        /// Brokers of the embedded Kafka cluster (topics are created with replication 1).
        public var kafkaBrokers: Int32 = 1
        /// Chunks are ~70 kB; the mock cluster keeps ~5 MB per partition, so large campaigns
        /// need many partitions.
        public var deliveryPartitions: Int32 = 8
        public var registryShards = 16
        public var simulatorThreads = 1
        /// A Redis Cluster of this many masters (each with ``redisReplicas`` replicas) instead
        /// of one `redis-server`; 0 (the default) runs one server.
        public var redisClusterMasters = 0
        public var redisReplicas = 1
        /// More `redis-server` options for the one server, e.g. `["--appendonly", "yes"]`.
        public var redisArguments: [String] = []
        /// A password the one server requires (`requirepass`), written to the configuration.
        public var redisPassword: String?
        /// `apns.request-timeout-ms` of the workers: a minute by default, so that a loaded test
        /// machine never times a request out; the fault suite uses the production default.
        public var apnsRequestTimeoutMilliseconds = 60_000
        /// `apns.connections-per-pool`: 2 unless changed (`nil`: the default, a pool that sizes
        /// itself up to 128).
        public var apnsConnectionsPerPool: Int? = 2
        /// App `news` authenticates with client certificates instead of a signing key: one per
        /// environment (`auth.sandbox`, `auth.production`), issued by the simulators' CA, valid
        /// for these durations. `nil` (the default): the signing key.
        public var certificates: [APNsEnvironment: Duration]?
        /// App `news` sends over the legacy binary interface (`transport: binary`), to the
        /// simulator's binary gateway, and the feedback workers read its feedback service every
        /// second. Needs ``certificates``.
        public var binaryInterface = false
        /// The API's port; 0 lets the system choose.
        public var apiPort = 0

        public init() {}
    }

    /// Partitions of `push.feedback`.
    public static let feedbackPartitions = 2
    /// What the stack was started with.
    public let options: Options
    /// The stack's Kafka.
    public let kafka: LocalKafka
    /// The embedded cluster and its fault hooks; a stack started on Tansu has none.
    public var cluster: EmbeddedKafkaCluster {
        guard let cluster = kafka.embeddedCluster else {
            preconditionFailure("this stack runs on \(kafka.kind) Kafka: the embedded cluster's fault hooks are not there")
        }
        return cluster
    }
    /// The one `redis-server`; `nil` when the stack runs a ``redisCluster``.
    public let redisServer: LocalRedisServer?
    /// The Redis Cluster, when ``Options/redisClusterMasters`` asked for one.
    public let redisCluster: LocalRedisCluster?
    /// The simulator every environment's requests go to, or only the sandbox's when the stack
    /// has a ``productionSimulator``.
    public let simulator: APNsSimulator
    /// A second simulator standing in for production, when asked for: the app `news` is then
    /// enabled for both environments, each with its own simulator (`apns.endpoints`).
    public let productionSimulator: APNsSimulator?
    /// Holds the configuration file, the signing key and the simulator's CA.
    public let directory: URL
    public let configurationPath: String
    public let configuration: PushFleetConfiguration
    /// The HTTP API key of each app (``app`` and ``otherApp``), freshly generated; the
    /// configuration holds only their SHA-256 digests.
    public let apiKeys: [String: String]
    /// A device key of ``app`` (scope `device`: binds, tags and receipts, never campaigns), as an
    /// app or its notification extension would hold it.
    public let deviceAPIKey: String

    private init(
        options: Options, kafka: LocalKafka, redisServer: LocalRedisServer?, redisCluster: LocalRedisCluster?, simulator: APNsSimulator,
        productionSimulator: APNsSimulator?,
        directory: URL,
        configurationPath: String, configuration: PushFleetConfiguration, apiKeys: [String: String], deviceAPIKey: String
    ) {
        self.options = options
        self.apiKeys = apiKeys
        self.deviceAPIKey = deviceAPIKey
        self.kafka = kafka
        self.redisServer = redisServer
        self.redisCluster = redisCluster
        self.simulator = simulator
        self.productionSimulator = productionSimulator
        self.directory = directory
        self.configurationPath = configurationPath
        self.configuration = configuration
    }

    /// Another simulator standing in for the sandbox beside ``simulator``, with its CA, provider
    /// keys and bundle ids, adjusted by `configure` (a distance, Apple's windows): point workers
    /// at it with `PUSHFLEET__APNS__ENDPOINT__PORT`. The caller shuts it down.
    public func startSimulator(
        logger: Logger, _ configure: (inout APNsSimulatorConfiguration) -> Void
    ) async throws -> APNsSimulator {
        var configuration = simulator.configuration
        configuration.port = 0
        configuration.controlPort = nil
        configuration.binaryPort = nil
        configuration.feedbackPort = nil
        configuration.tls = simulator.tlsIdentity
        configure(&configuration)
        let another = try APNsSimulator(configuration: configuration, logger: logger)
        try await another.start()
        return another
    }

    /// Starts everything; `configureSimulator` adjusts the simulator (devices, faults, latency).
    /// With `productionSimulator`, a second simulator stands in for production, adjusted by it.
    public static func start(
        _ options: Options = Options(),
        logger: Logger,
        simulator configureSimulator: (inout APNsSimulatorConfiguration) -> Void = { _ in },
        productionSimulator configureProduction: ((inout APNsSimulatorConfiguration) -> Void)? = nil
    ) async throws -> EmbeddedStack {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-stack-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)

        let key = P256.Signing.PrivateKey()
        try key.pemRepresentation.write(to: directory.appendingPathComponent("\(app).p8"), atomically: true, encoding: .utf8)
        let trusted = options.simulatorTrustsKey ? key.publicKey : P256.Signing.PrivateKey().publicKey
        var simulatorConfiguration = APNsSimulatorConfiguration(
            threads: options.simulatorThreads,
            providerKeys: [APNsSimulatorProviderKey(keyID: keyID, teamID: teamID, publicKey: trusted)],
            bundleIDs: [bundleID, otherBundleID])
        if options.binaryInterface {
            precondition(options.certificates != nil, "the binary interface authenticates with certificates")
            simulatorConfiguration.binaryPort = 0
            simulatorConfiguration.feedbackPort = 0
        }
        configureSimulator(&simulatorConfiguration)
        let simulator = try APNsSimulator(configuration: simulatorConfiguration, logger: logger)
        try await simulator.start()
        try simulator.tlsIdentity.writeCertificateAuthority(to: directory.appendingPathComponent("ca.pem").path)
        var productionSimulator: APNsSimulator?
        if let configureProduction {
            var configuration = simulatorConfiguration
            configuration.environment = .production
            // One CA for both, so that the configuration's one ca-file trusts both.
            configuration.tls = simulator.tlsIdentity
            configuration.devices = APNsSimulatorDevices()
            configureProduction(&configuration)
            let production = try APNsSimulator(configuration: configuration, logger: logger)
            try await production.start()
            productionSimulator = production
        }

        // App news signs provider tokens, or holds a certificate per environment.
        var newsAuth = "      token: {team-id: \(teamID), key-id: \(keyID), key-file: \(app).p8}"
        if let certificates = options.certificates {
            var lines: [String] = []
            for (environment, validity) in certificates.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                let issued = try simulator.tlsIdentity.issueClientCertificate(
                    topic: bundleID, environmentName: environment.rawValue, validFor: validity)
                try issued.certificatePEM.write(
                    to: directory.appendingPathComponent("\(environment.rawValue).pem"), atomically: true, encoding: .utf8)
                try issued.privateKeyPEM.write(
                    to: directory.appendingPathComponent("\(environment.rawValue)-key.pem"), atomically: true, encoding: .utf8)
                lines.append(
                    "      \(environment.rawValue):\n        certificate: {certificate-file: \(environment.rawValue).pem, key-file: \(environment.rawValue)-key.pem}"
                )
            }
            newsAuth = lines.joined(separator: "\n")
        }

        var kafka: LocalKafka?
        do {
            let started = try await LocalKafka.start(options.kafka, brokers: options.kafkaBrokers, logger: logger)
            kafka = started
            try await started.createTopic(PushTopic.jobs, partitions: options.jobPartitions)
            try await started.createTopic(PushTopic.deliveries, partitions: options.deliveryPartitions)
            try await started.createTopic(PushTopic.feedback, partitions: Int32(feedbackPartitions))
            try await started.createTopic(PushTopic.deadLetters, partitions: 1)
            try await started.createTopic(PushTopic.online, partitions: 2)
        } catch {
            await kafka?.stop()
            try? await simulator.shutdown()
            try? await productionSimulator?.shutdown()
            throw error
        }
        guard let kafka else { preconditionFailure("Kafka started or the start threw") }

        var redisServer: LocalRedisServer?
        var redisCluster: LocalRedisCluster?
        do {
            if options.redisClusterMasters > 0 {
                redisCluster = try await LocalRedisCluster.start(masters: options.redisClusterMasters, replicasPerMaster: options.redisReplicas)
            } else {
                redisServer = try await LocalRedisServer.start(extraArguments: options.redisArguments, password: options.redisPassword)
            }
        } catch {
            await kafka.stop()
            try? await simulator.shutdown()
            try? await productionSimulator?.shutdown()
            throw error
        }
        var apiKeys: [String: String] = [:]
        var digests: [String: String] = [:]
        for app in [app, otherApp] {
            (apiKeys[app], digests[app]) = generateAPIKey()
        }
        let deviceKey = generateAPIKey()
        // The online channel's connect-token key (`pushfleet gateway`, the API's connect tokens).
        let gatewaySecret = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        func section(_ lines: [String], indent: Int, emptyValue: String = "{}") -> String {
            guard !lines.isEmpty else { return String(repeating: " ", count: indent) + emptyValue }
            return lines.map { String(repeating: " ", count: indent) + $0 }.joined(separator: "\n")
        }
        let endpoints =
            productionSimulator.map { production in
                """
                  endpoints:
                    sandbox: {host: 127.0.0.1, port: \(simulator.port)}
                    production: {host: 127.0.0.1, port: \(production.port)}
                """
            } ?? "  # one endpoint for both environments"
        let newsEnvironments = productionSimulator == nil ? "[sandbox]" : "[sandbox, production]"
        var binarySettings = "  # HTTP/2 only"
        var newsTransport = "    # transport: http2"
        if options.binaryInterface, let binaryPort = simulator.binaryPort, let feedbackPort = simulator.feedbackPort {
            binarySettings = """
                  binary-endpoints:
                    sandbox: {host: 127.0.0.1, port: \(binaryPort)}
                  feedback-endpoints:
                    sandbox: {host: 127.0.0.1, port: \(feedbackPort)}
                  binary-quiet-period-ms: 200
                  feedback-interval-seconds: 1
                """
            newsTransport = "    transport: binary"
        }
        let redisSection: String
        if let redisCluster {
            redisSection = "  cluster-nodes: [\(redisCluster.seeds.map { "\"\($0)\"" }.joined(separator: ", "))]"
        } else if let redisServer {
            redisSection =
                "  host: \(redisServer.host)\n  port: \(redisServer.port)"
                + (options.redisPassword.map { "\n  password: \"\($0)\"" } ?? "")
        } else {
            preconditionFailure("a stack has a Redis server or a Redis Cluster")
        }
        let yaml = """
            # Written by EmbeddedStack: the \(kafka.kind) Kafka, redis-server and APNs simulator.
            kafka:
              bootstrap-servers: "\(kafka.bootstrapServers)"
              group-prefix: pushfleet
              topics:
                partitions: {jobs: \(options.jobPartitions), deliveries: \(options.deliveryPartitions), feedback: \(feedbackPartitions), dead-letters: 1, online: 2}
              properties:
                # The mock cluster holds a fetch for the whole wait time; keep it short.
                fetch.wait.max.ms: 10
            \(section(options.kafkaProperties.sorted { $0.key < $1.key }.map { "\($0.key): \"\($0.value)\"" }, indent: 4, emptyValue: "# no more"))
            redis:
            \(redisSection)
              pool-size: 8
            apns:
              endpoint: {host: 127.0.0.1, port: \(simulator.port)}
            \(endpoints)
            \(binarySettings)
              ca-file: ca.pem
              \(options.apnsConnectionsPerPool.map { "connections-per-pool: \($0)" } ?? "# connections-per-pool: the default")
              request-timeout-ms: \(options.apnsRequestTimeoutMilliseconds)
            registry:
              shards: \(options.registryShards)
            worker:
            \(section(options.workerSettings, indent: 2))
            resend:
            \(section(options.resendSettings, indent: 2))
            breaker:
            \(section(options.breakerSettings, indent: 2))
            api:
              host: 127.0.0.1
              port: \(options.apiPort)
            gateway:
              host: 127.0.0.1
              secret-file: gateway.secret
            apps:
              \(app):
                bundle-id: \(bundleID)
                environments: \(newsEnvironments)
            \(newsTransport)
                auth:
            \(newsAuth)
                api-keys: ["\(digests[app] ?? "")", "\(deviceKey.digest) device"]
            \(section(options.appSettings, indent: 4, emptyValue: "# no more settings"))
              \(otherApp):
                bundle-id: \(otherBundleID)
                environments: [sandbox]
                auth:
                  token: {team-id: \(teamID), key-id: \(keyID), key-file: \(app).p8}
                api-keys: ["\(digests[otherApp] ?? "")"]
            """
        let configurationPath = directory.appendingPathComponent("pushfleet.yaml").path
        do {
            try gatewaySecret.write(to: directory.appendingPathComponent("gateway.secret"), atomically: true, encoding: .utf8)
            try yaml.write(toFile: configurationPath, atomically: true, encoding: .utf8)
            let configuration = try PushFleetConfiguration.load(path: configurationPath, environment: [:])
            return EmbeddedStack(
                options: options, kafka: kafka, redisServer: redisServer, redisCluster: redisCluster, simulator: simulator,
                productionSimulator: productionSimulator,
                directory: directory,
                configurationPath: configurationPath, configuration: configuration, apiKeys: apiKeys, deviceAPIKey: deviceKey.key)
        } catch {
            await kafka.stop()
            await redisServer?.stop()
            await redisCluster?.stop()
            try? await simulator.shutdown()
            try? await productionSimulator?.shutdown()
            throw error
        }
    }

    /// A fresh API key and the digest a configuration's `api-keys` lists for it.
    public static func generateAPIKey() -> (key: String, digest: String) {
        let key = "pfk_" + (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        return (key, "sha256:" + SHA256.hash(data: Array(key.utf8)).map { String(format: "%02x", $0) }.joined())
    }

    /// A client of the stack's Redis (its server, or its cluster), as a worker makes it.
    public func makeRedisClient(logger: Logger) -> any RedisCommands {
        if let redisCluster {
            return RedisClusterClient(configuration: redisCluster.configuration, logger: logger)
        }
        guard let redisServer else { preconditionFailure("a stack has a Redis server or a Redis Cluster") }
        return RedisClient(configuration: redisServer.configuration, logger: logger)
    }

    /// Where Redis listens, for people: `host:port`, or the cluster's seed nodes.
    public var redisDescription: String {
        if let redisCluster { return "cluster \(redisCluster.seeds.map(\.description).joined(separator: ","))" }
        return redisServer.map { "\($0.host):\($0.port)" } ?? "none"
    }

    /// The arguments of a `pushfleet worker` process on this stack, taking every role.
    public func workerArguments(logLevel: String) -> [String] {
        [
            "worker", "--config", configurationPath, "--role", "expand", "--role", "send", "--role", "feedback",
            "--log-level", logLevel,
        ]
    }

    /// Stops redis-server, the simulator and a Tansu broker, and removes the directory. The
    /// embedded Kafka cluster stops when the last reference to it goes.
    public func stop() async {
        await kafka.stop()
        await redisServer?.stop()
        await redisCluster?.stop()
        try? await simulator.shutdown()
        try? await productionSimulator?.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }
}
