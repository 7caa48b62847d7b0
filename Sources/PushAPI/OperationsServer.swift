import APNsCore
import HTTPTypes
import Hummingbird
import Kafka
public import Logging
import NIOCore
public import Prometheus
public import PushConfiguration
public import PushCore
import PushJobs
import PushStore
import Redis
public import ServiceLifecycle

/// What every worker process serves on `metrics.port`: `/healthz` (the process answers),
/// `/readyz` (Kafka and Redis answer; 503 otherwise) and `/metrics` (the Prometheus text of
/// `registry`, which the process bootstrapped swift-metrics with). A `Service`: stops on
/// graceful shutdown.
public struct OperationsServer: Service {
    let configuration: PushFleetConfiguration
    let registry: PrometheusCollectorRegistry
    let port: Int
    /// The consumer groups whose lag `/metrics` reports, with their topics.
    let lagGroups: [(group: String, topic: String)]
    /// The apps' client certificates, shown in `/readyz` and `/metrics`.
    let certificates: [CertificateExpiry]
    let logger: Logger
    let onListening: @Sendable (Int) async -> Void

    public init(
        configuration: PushFleetConfiguration, registry: PrometheusCollectorRegistry, port: Int,
        lagGroups: [(group: String, topic: String)] = [], certificates: [CertificateExpiry] = [], logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) {
        self.lagGroups = lagGroups
        self.certificates = certificates
        self.configuration = configuration
        self.registry = registry
        self.port = port
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        let redis = try configuration.redis.makeClient(clientName: "pushfleet-probe", logger: logger)
        let admin = try configuration.kafka.makeAdmin(logger: logger)
        let certificates = self.certificates
        let probe = ReadinessProbe(redis: redis, admin: admin, certificates: certificates)
        let registry = self.registry
        let router = Router()
        router.get("/healthz") { _, _ in APIResponse.json(["status": "ok"]) }
        router.get("/readyz") { _, _ in
            let (ready, body) = await probe.check()
            return APIResponse.json(body, status: ready ? .ok : .serviceUnavailable)
        }
        let lagGroups = self.lagGroups
        router.get("/metrics") { _, _ in
            async let lag = Self.consumerLag(lagGroups, admin: admin)
            async let dependencies = probe.dependencies()
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            buffer += Array(await lag.utf8)
            buffer += Array(ReadinessProbe.dependencyUp(await dependencies).utf8)
            buffer += Array(Self.certificateExpiry(certificates, now: StoreClock.system()).utf8)
            return APIResponse.text(buffer, contentType: "text/plain; version=0.0.4")
        }
        let result = await HTTPServing.serve(
            router.buildResponder(), host: "0.0.0.0", port: port, what: "health and metrics endpoints", logger: logger,
            onListening: onListening)
        await redis.shutdown()
        try result.get()
    }

    /// `pushfleet_apns_certificate_expiry_days{app, environment}`: days until each client
    /// certificate expires (negative once it has), computed at scrape time.
    static func certificateExpiry(_ certificates: [CertificateExpiry], now: Int64) -> String {
        guard !certificates.isEmpty else { return "" }
        var lines = [
            "# HELP pushfleet_apns_certificate_expiry_days Days until the app's APNs client certificate expires (negative once it has).",
            "# TYPE pushfleet_apns_certificate_expiry_days gauge",
        ]
        for expiry in certificates {
            let days = (expiry.daysLeft(now: now) * 1000).rounded() / 1000
            lines.append(#"pushfleet_apns_certificate_expiry_days{app="\#(expiry.app)",environment="\#(expiry.environment.rawValue)"} \#(days)"#)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `pushfleet_consumer_lag{group, topic, partition}`: messages of each partition beyond the
    /// group's committed offset (the whole partition while nothing is committed), read from
    /// Kafka at scrape time; groups Kafka does not answer for are left out.
    static func consumerLag(_ groups: [(group: String, topic: String)], admin: KafkaAdmin) async -> String {
        guard !groups.isEmpty else { return "" }
        var lines = [
            "# HELP pushfleet_consumer_lag Messages of the partition the consumer group has not committed yet.",
            "# TYPE pushfleet_consumer_lag gauge",
        ]
        for (group, topic) in groups {
            guard let marks = try? await admin.watermarks(topic: topic, timeout: .seconds(2)),
                let committed = try? await admin.committedOffsets(group: group, topic: topic, timeout: .seconds(2))
            else { continue }
            for partition in marks.keys.sorted() {
                guard let mark = marks[partition] else { continue }
                let offset = committed[partition].flatMap { $0 >= 0 ? $0 : nil } ?? mark.low
                lines.append(#"pushfleet_consumer_lag{group="\#(group)",topic="\#(topic)",partition="\#(partition)"} \#(max(mark.high - offset, 0))"#)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
