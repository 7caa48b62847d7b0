public import Logging
public import Prometheus
public import PushConfiguration
public import ServiceLifecycle
import Hummingbird
import HTTPTypes
import Kafka
import NIOCore
import PushCore
import PushPipeline
import Redis

/// What every worker process serves on `metrics.port`: `/healthz` (the process answers),
/// `/readyz` (Kafka and Redis answer; 503 otherwise) and `/metrics` (the Prometheus text of
/// `registry`, which the process bootstrapped swift-metrics with). A `Service`: stops on
/// graceful shutdown.
public struct OperationsServer: Service {
    let configuration: PushFleetConfiguration
    let registry: PrometheusCollectorRegistry
    let port: Int
    let logger: Logger
    let onListening: @Sendable (Int) async -> Void

    public init(
        configuration: PushFleetConfiguration, registry: PrometheusCollectorRegistry, port: Int, logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.registry = registry
        self.port = port
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        let redis = RedisClient(configuration: try configuration.redis.redisConfiguration(clientName: "pushfleet-probe"), logger: logger)
        let admin = try KafkaAdmin(
            bootstrapServers: configuration.kafka.bootstrapServers,
            properties: KafkaConfigurationProperties(configuration.kafka.properties), logger: logger)
        let probe = ReadinessProbe(redis: redis, admin: admin)
        let registry = self.registry
        let router = Router()
        router.get("/healthz") { _, _ in APIResponse.json(["status": "ok"]) }
        router.get("/readyz") { _, _ in
            let (ready, body) = await probe.check()
            return APIResponse.json(body, status: ready ? .ok : .serviceUnavailable)
        }
        router.get("/metrics") { _, _ in
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            return APIResponse.text(buffer, contentType: "text/plain; version=0.0.4")
        }
        let onListening = self.onListening
        let logger = self.logger
        let application = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname("0.0.0.0", port: port), serverName: "PushFleet"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                logger.info("health and metrics endpoints listening", metadata: ["port": "\(port)"])
                await onListening(port)
            },
            logger: logger)
        let result: Result<Void, any Error>
        do {
            try await application.run()
            result = .success(())
        } catch {
            result = .failure(error)
        }
        await redis.shutdown()
        try result.get()
    }
}
