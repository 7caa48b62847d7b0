import Kafka
import Logging
import PushConfiguration
import PushGateway
import PushJobs
import PushPipeline
import PushStore
import Redis

/// What the API's handlers share: the configured apps and their keys, the registry, the job
/// store and dead-letter log, the publisher and job operator, the clients (for readiness) and
/// the metrics.
final class APIEnvironment: Sendable {
    let apps: [String: AppSettings]
    let keys: LiveAPIKeyring
    let registry: DeviceRegistry
    let jobs: JobStore
    let publisher: JobPublisher
    let jobOperator: JobOperator
    let redis: any RedisCommands
    let readiness: ReadinessProbe
    let channels: ChannelManager
    let testSender: TestSender
    let activityTokens: ActivityTokenStore
    let deadLetters: DeadLetterLog
    let hours: HourStatistics
    /// The badges the server keeps for campaigns with a badge rule.
    let badges: BadgeStore
    let metrics: APIMetrics
    let maxBodyBytes: Int
    /// How long after its publication a campaign can be recalled (`jobs.recall-window-hours`).
    let recallWindow: Duration
    /// The connect tokens' signer (`gateway.secret-file`); `nil` when none is configured (the
    /// connect-token route then answers 503).
    let connectTokens: ConnectToken?
    /// `gateway.token-ttl-seconds`.
    let connectTokenTimeToLive: Duration
    let presence: PresenceStore
    let logger: Logger
    let clock: @Sendable () -> Int64

    init(
        configuration: PushFleetConfiguration, keys: LiveAPIKeyring, redis: any RedisCommands, producer: KafkaProducer,
        admin: KafkaAdmin, apns: OnDemandAPNs, metrics: APIMetrics, connectTokens: ConnectToken?, logger: Logger
    ) {
        self.connectTokens = connectTokens
        connectTokenTimeToLive = configuration.gateway.tokenTimeToLive
        presence = PresenceStore(client: redis)
        channels = ChannelManager(apns: apns, store: ChannelStore(client: redis))
        testSender = TestSender(apns: apns)
        activityTokens = ActivityTokenStore(client: redis)
        apps = configuration.apps
        recallWindow = configuration.jobs.recallWindow
        self.keys = keys
        registry = DeviceRegistry(client: redis, configuration: configuration.registry.registryConfiguration)
        let jobs = JobStore(client: redis)
        self.jobs = jobs
        deadLetters = DeadLetterLog(client: redis, timeToLive: jobs.specTimeToLive)
        hours = HourStatistics(client: redis)
        badges = BadgeStore(client: redis, markerTimeToLive: jobs.specTimeToLive)
        publisher = JobPublisher(producer: producer, jobs: jobs, idempotency: IdempotencyKeys(client: redis))
        jobOperator = JobOperator(producer: producer, jobs: jobs, publisher: publisher)
        self.redis = redis
        readiness = ReadinessProbe(redis: redis, admin: admin)
        self.metrics = metrics
        maxBodyBytes = configuration.api.maxBodyBytes
        self.logger = logger
        clock = StoreClock.system
    }
}
