/// The complete PushFleet configuration: plain values, validated when parsed.
///
/// Build one with ``load(path:environment:)`` (file + `PUSHFLEET__…` overrides + file checks) or
/// ``parse(yaml:baseDirectory:environment:)``; ``exampleYAML`` documents the format.
public struct PushFleetConfiguration: Sendable, Equatable {
    /// Kafka settings (`kafka:`); `bootstrap-servers` is required.
    public var kafka: KafkaSettings
    /// Redis settings (`redis:`); default ``RedisSettings/init(host:port:username:password:passwordFile:database:poolSize:)``.
    public var redis: RedisSettings
    /// APNs settings (`apns:`); default ``APNsSettings/init(endpoint:caFile:port:connectionsPerPool:requestTimeout:)``.
    public var apns: APNsSettings
    /// Registry settings (`registry:`); default 16 shards.
    public var registry: RegistrySettings
    /// Worker settings (`worker:`); defaults as documented on ``WorkerSettings``.
    public var worker: WorkerSettings
    /// Resend policy (`resend:`); defaults as documented on ``ResendSettings``.
    public var resend: ResendSettings
    /// The campaign circuit breaker (`breaker:`); defaults as documented on ``BreakerSettings``.
    public var breaker: BreakerSettings
    /// What operators may do to published jobs (`jobs:`); defaults as documented on ``JobsSettings``.
    public var jobs: JobsSettings
    /// Metrics settings (`metrics:`); default no metrics port.
    public var metrics: MetricsSettings
    /// HTTP API settings (`api:`); defaults as documented on ``APISettings``.
    public var api: APISettings
    /// The online channel (`gateway:`); defaults as documented on ``GatewaySettings``.
    public var gateway: GatewaySettings
    /// Traces (`tracing:`); default off.
    public var tracing: TracingSettings
    /// The apps, keyed by app id (`apps:`); at least one.
    public var apps: [String: AppSettings]

    /// Creates a configuration; every section but `kafka` and `apps` has its documented defaults.
    public init(
        kafka: KafkaSettings, redis: RedisSettings = RedisSettings(), apns: APNsSettings = APNsSettings(),
        registry: RegistrySettings = RegistrySettings(), worker: WorkerSettings = WorkerSettings(),
        resend: ResendSettings = ResendSettings(), breaker: BreakerSettings = BreakerSettings(),
        jobs: JobsSettings = JobsSettings(), metrics: MetricsSettings = MetricsSettings(),
        api: APISettings = APISettings(), gateway: GatewaySettings = GatewaySettings(), tracing: TracingSettings = TracingSettings(),
        apps: [String: AppSettings]
    ) {
        self.kafka = kafka
        self.redis = redis
        self.apns = apns
        self.registry = registry
        self.worker = worker
        self.resend = resend
        self.breaker = breaker
        self.jobs = jobs
        self.metrics = metrics
        self.api = api
        self.gateway = gateway
        self.tracing = tracing
        self.apps = apps
    }

    /// The HTTP/2 connections per pool for `app`: its own `connections-per-pool`, else
    /// `apns.connections-per-pool`.
    public func connectionsPerPool(for app: AppSettings) -> Int {
        app.connectionsPerPool ?? apns.connectionsPerPool
    }
}
