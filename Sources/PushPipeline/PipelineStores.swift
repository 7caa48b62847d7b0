import PushConfiguration
import PushJobs
import PushStore
import Redis

/// The Redis-backed stores of one worker process, built once over its Redis client; each stage
/// takes the ones it uses.
struct PipelineStores: Sendable {
    let registry: DeviceRegistry
    let jobs: JobStore
    let resend: ResendBuffer
    let limiter: RateLimiter
    let schedule: JobSchedule
    let suspensions: SuspensionCache
    /// Each job's control state (running, paused, cancelled; its operator rate), as this worker
    /// last read it.
    let controls: JobControlCache
    let idempotency: IdempotencyKeys
    let channels: ChannelStore
    let activityTokens: ActivityTokenStore
    /// The newest dead letters of each job and app, for the API; `push.dlq` has them all.
    let deadLetterLog: DeadLetterLog
    /// Sends and receipts by the hour of the day they happened in.
    let hours: HourStatistics
    /// Each device's badge, for the campaigns whose `aps.badge` is a rule.
    let badges: BadgeStore
    /// Chunks of jobs sent at each device's own time, waiting for their slot.
    let parked: ParkedChunks
    /// Which gateway holds each device's online connection.
    let presence: PresenceStore
    let inbox: InboxStore

    init(redis: any RedisCommands, configuration: PushFleetConfiguration, clock: @escaping @Sendable () -> Int64 = StoreClock.system) {
        self.registry = DeviceRegistry(
            client: redis, configuration: configuration.registry.registryConfiguration)
        let jobs = JobStore(client: redis)
        self.jobs = jobs
        self.resend = ResendBuffer(client: redis, policy: configuration.resend.policy, clock: clock)
        self.limiter = RateLimiter(client: redis)
        self.schedule = JobSchedule(client: redis, clock: clock)
        self.suspensions = SuspensionCache(store: AppSuspension(client: redis), duration: configuration.apns.credentialSuspension)
        self.controls = JobControlCache(store: jobs)
        self.idempotency = IdempotencyKeys(client: redis)
        self.channels = ChannelStore(client: redis)
        self.activityTokens = ActivityTokenStore(client: redis)
        self.deadLetterLog = DeadLetterLog(client: redis, timeToLive: jobs.specTimeToLive)
        self.hours = HourStatistics(client: redis)
        self.badges = BadgeStore(client: redis, markerTimeToLive: jobs.specTimeToLive)
        self.parked = ParkedChunks(client: redis, clock: clock)
        self.presence = PresenceStore(client: redis)
        self.inbox = InboxStore(client: redis)
    }
}
