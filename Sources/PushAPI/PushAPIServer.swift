import APNs
import Hummingbird
import Kafka
public import Logging
import NIOCore
import NIOPosix
public import Prometheus
public import PushConfiguration
import PushGateway
import PushJobs
import PushPipeline
import PushStore
import Redis
public import ServiceLifecycle

/// `pushfleet api`: the HTTP API (Hummingbird) over the device registry, `push.jobs` and the
/// job statistics, as a `Service` that stops on graceful shutdown: it stops accepting, answers
/// what is in flight, then closes its Kafka producer (flushing) and Redis connections.
public struct PushAPIServer: Service, CustomStringConvertible {
    let configuration: PushFleetConfiguration
    let logger: Logger
    let onListening: @Sendable (Int) async -> Void
    let registry: PrometheusCollectorRegistry

    /// - Parameter registry: what `/metrics` serves (the process's swift-metrics registry when it
    ///   bootstrapped one); the API's own series are added to it.
    /// - Parameter onListening: called with the bound port once the server accepts requests
    ///   (with `api.port: 0`, the port the system chose).
    public init(
        configuration: PushFleetConfiguration, logger: Logger, registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.registry = registry
        self.logger = logger
        self.onListening = onListening
    }

    /// How service lifecycle logs name the server: not the whole configuration it holds.
    public var description: String { "PushAPIServer(\(configuration.api.host):\(configuration.api.port))" }

    public func run() async throws {
        let keys = try LiveAPIKeyring(apps: configuration.apps.values.sorted { $0.id < $1.id }, logger: logger)
        // A configured key that cannot be read stops the API at start, not at the first request.
        let connectTokens = try configuration.gateway.secretFile.map { _ in ConnectToken(secret: try configuration.gateway.resolvedSecret()) }
        // Channel management and test sends are the API's only uses of APNs: its connections open
        // on the first such request, and the app's credential is read then.
        let apnsClient = try APNsClient(
            configuration: configuration.apns.clientConfiguration(connectionsPerPool: 1), eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            logger: logger)
        let producer = try configuration.kafka.makeProducer(clientID: "pushfleet-api", logger: logger)
        let redis = try configuration.redis.makeClient(clientName: "pushfleet-api", logger: logger)
        let admin = try configuration.kafka.makeAdmin(logger: logger)
        let environment = APIEnvironment(
            configuration: configuration, keys: keys, redis: redis, producer: producer, admin: admin,
            apns: OnDemandAPNs(client: apnsClient),
            metrics: APIMetrics(registry: registry), connectTokens: connectTokens, logger: logger)
        let watcher = Task { await keys.watch() }
        let result = await HTTPServing.serve(
            APIResponder(api: environment), host: configuration.api.host, port: configuration.api.port, what: "API",
            logger: logger, onListening: onListening)
        watcher.cancel()
        await producer.close()
        await environment.channels.shutdown()
        await redis.shutdown()
        try result.get()
    }
}
