import APNs
import APNsCore
import Foundation
import Kafka
public import Logging
import NIOCore
import NIOPosix
public import PushConfiguration
public import PushCore
import PushJobs
import PushStore
import Redis
public import ServiceLifecycle
import Synchronization

/// One worker process of the pipeline: the stages of its roles, each a member of its Kafka
/// consumer group (`<group-prefix>.expand`, `.send`, `.feedback`), sharing one producer, one
/// Redis pool and the APNs clients. Stateless: run as many copies as the partitions allow.
///
/// A `Service`: on graceful shutdown the consumers stop fetching, chunks in flight finish (their
/// notifications reach a final outcome or the resend buffer), processed offsets are committed,
/// then the producer flushes and connections close.
public final class PushWorker: Service, Sendable {
    public let configuration: PushFleetConfiguration
    public let roles: Set<WorkerRole>
    /// What this worker did so far.
    public let counters: WorkerCounters
    private let apps: [String: PushApp]
    /// When the apps' client certificates expire (read at start; `/readyz` and `/metrics` of
    /// the worker's operations server show them, ``run()`` warns of those expiring).
    public let certificateExpiries: [CertificateExpiry]
    private let logger: Logger
    /// The time in milliseconds since 1970 the stages and stores go by; tests pass one they move.
    private let clock: @Sendable () -> Int64
    /// What ``unfinishedWork`` reads while the worker runs: each consumer and the sender.
    private let running = Mutex<(consumers: [KafkaConsumer], sender: NotificationSender?, parts: [String: Int])>(([], nil, [:]))

    /// What the worker is in the middle of: its parts still running (stages, consumers,
    /// clients closing), messages handed to its stages and not finished, by topic, and
    /// notifications sent whose outcome is not settled. A worker stopping at its
    /// deadline logs it: the messages are read again by their partitions' next owners, and
    /// the notifications in flight may be sent a second time.
    public var unfinishedWork: Logger.Metadata {
        let (consumers, sender, parts) = running.withLock { ($0.consumers, $0.sender, $0.parts) }
        var metadata: Logger.Metadata = [:]
        if !parts.isEmpty {
            metadata["unfinished.parts"] = "\(parts.keys.sorted())"
        }
        for consumer in consumers where consumer.unfinishedCount > 0 {
            metadata["unfinished.\(consumer.topics.joined(separator: ","))"] = "\(consumer.unfinishedCount)"
        }
        if let sender {
            metadata["unfinished.notifications-in-flight"] = "\(sender.notificationsInFlight)"
        }
        return metadata
    }

    /// Loads the apps' credentials; nothing connects until ``run()``.
    ///
    /// - Throws: ``ConfigurationError`` when a key or certificate file cannot be read, or a
    ///   certificate is not one.
    public init(
        configuration: PushFleetConfiguration,
        roles: Set<WorkerRole>,
        counters: WorkerCounters = WorkerCounters(),
        logger: Logger,
        clock: (@Sendable () -> Int64)? = nil
    ) throws(ConfigurationError) {
        var apps: [String: PushApp] = [:]
        var expiries: [CertificateExpiry] = []
        for (id, settings) in configuration.apps.sorted(by: { $0.key < $1.key }) {
            let app = try PushApp.load(settings)
            apps[id] = app
            expiries += try app.certificateExpiries()
        }
        self.certificateExpiries = expiries
        self.configuration = configuration
        self.roles = roles
        self.counters = counters
        self.apps = apps
        self.logger = logger
        self.clock = clock ?? StoreClock.system
    }

    public func run() async throws {
        let now = StoreClock.system()
        for expiry in certificateExpiries {
            guard let warning = expiry.warning(now: now) else { continue }
            let metadata: Logger.Metadata = ["app": "\(expiry.app)", "environment": "\(expiry.environment.rawValue)"]
            if expiry.state(now: now) == .expired {
                logger.error("\(warning)", metadata: metadata)
            } else {
                logger.warning("\(warning)", metadata: metadata)
            }
        }
        let kafka = configuration.kafka
        do {
            try await requireTopics()
        } catch is CancellationError {
            return  // stopped before it started
        }
        let producer = try kafka.makeProducer(clientID: "pushfleet-worker", logger: logger)
        let redis = try configuration.redis.makeClient(clientName: "pushfleet-worker", logger: logger)
        let apnsEventLoops = MultiThreadedEventLoopGroup(
            numberOfThreads: configuration.apns.effectiveEventLoops(cores: ProcessInfo.processInfo.activeProcessorCount))
        let clients: [String: APNsClient]
        let distinctClients: [APNsClient]
        do {
            (clients, distinctClients) = try makeAPNsClients(on: apnsEventLoops)
        } catch {
            try? await apnsEventLoops.shutdownGracefully()
            throw error
        }
        let stores = PipelineStores(redis: redis, configuration: configuration, clock: clock)
        let outlet = PipelineOutlet(
            apps: apps, producer: producer, jobs: stores.jobs, deadLetterLog: stores.deadLetterLog, counters: counters, logger: logger,
            clock: clock)
        let sender = NotificationSender(
            outlet: outlet, clients: clients, jobs: stores.jobs, controls: stores.controls, suspensions: stores.suspensions,
            resend: stores.resend, hours: stores.hours, badges: stores.badges, registry: stores.registry, limiter: stores.limiter,
            worker: configuration.worker, breaker: configuration.breaker)
        let worker = configuration.worker
        let feedbackInterval = configuration.apns.feedbackInterval

        var consumers: [(KafkaConsumer, Int, @Sendable (KafkaConsumerMessage) async -> Bool)] = []
        if roles.contains(.expand) {
            let stage = ExpandStage(
                outlet: outlet, registry: stores.registry, jobs: stores.jobs, controls: stores.controls, idempotency: stores.idempotency,
                schedule: stores.schedule, channels: stores.channels, activityTokens: stores.activityTokens, hours: stores.hours,
                parked: stores.parked, clients: clients, chunkSize: worker.chunkSize)
            consumers.append(
                (try consumer(PushTopic.jobs, role: .expand, buffer: 64, metrics: outlet.metrics), worker.expansionsInFlight, stage.handle))
        }
        if roles.contains(.send) {
            let stage = SendStage(
                outlet: outlet, jobs: stores.jobs, controls: stores.controls,
                online: OnlineRouter(
                    outlet: outlet, presence: stores.presence, jobs: stores.jobs, resend: stores.resend, inbox: stores.inbox,
                    fallbackDelay: configuration.gateway.fallbackDelay, inboxSize: configuration.gateway.inboxSize,
                    inboxTimeToLive: configuration.gateway.inboxTimeToLive),
                sender: sender)
            consumers.append(
                (
                    try consumer(WorkerRole.send.topic, role: .send, buffer: 2 * worker.chunksInFlight, metrics: outlet.metrics),
                    worker.chunksInFlight, stage.handle
                ))
        }
        if roles.contains(.feedback) {
            let stage = FeedbackStage(
                outlet: outlet, registry: stores.registry, jobs: stores.jobs,
                probesOtherEnvironment: configuration.registry.probesOtherEnvironment, clients: clients)
            consumers.append((try consumer(WorkerRole.feedback.topic, role: .feedback, buffer: 1_000, metrics: outlet.metrics), 64, stage.handle))
        }
        running.withLock {
            $0.consumers = consumers.map(\.0)
            $0.sender = roles.contains(.send) ? sender : nil
        }
        logger.info(
            "worker started",
            metadata: ["roles": "\(roles.map(\.rawValue).sorted())", "apps": "\(apps.keys.sorted())", "kafka": "\(kafka.bootstrapServers)"])

        await withDiscardingTaskGroup { group in
            for (consumer, concurrency, handler) in consumers {
                let topic = consumer.topics.joined(separator: ",")
                addPart("consumer \(topic)", to: &group) { try? await consumer.run() }
                addPart("stage \(topic)", to: &group) {
                    await MessageLoop.run(consumer, concurrency: concurrency, metrics: outlet.metrics, handler: handler)
                }
            }
            if roles.contains(.send) {
                addPart("resend drainer", to: &group) {
                    await ResendDrainer(
                        outlet: outlet, resend: stores.resend, suspensions: stores.suspensions, jobs: stores.jobs,
                        pollInterval: worker.resendPollInterval, sender: sender
                    ).run()
                }
                addPart("pool sampler", to: &group) { await Self.samplePools(distinctClients, metrics: outlet.metrics) }
            }
            if roles.contains(.expand) {
                addPart("schedule releaser", to: &group) { await ScheduleReleaser(outlet: outlet, schedule: stores.schedule).run() }
                addPart("parked chunk releaser", to: &group) {
                    await ParkedChunkReleaser(outlet: outlet, parked: stores.parked, jobs: stores.jobs).run()
                }
            }
            if roles.contains(.feedback) {
                addPart("feedback service poller", to: &group) {
                    await FeedbackServicePoller(outlet: outlet, interval: feedbackInterval, clients: clients).run()
                }
            }
        }
        await stopping("Kafka producer") { await producer.close() }
        await stopping("APNs clients") {
            for client in distinctClients {
                await client.shutdown()
            }
            try? await apnsEventLoops.shutdownGracefully()
        }
        await stopping("Redis client") { await redis.shutdown() }
        logger.info("worker stopped", metadata: ["counters": "\(counters.snapshot().filter { $0.value > 0 })"])
    }

    /// Runs one part of the worker in `group`, named in ``unfinishedWork`` until it returns.
    private func addPart(_ name: String, to group: inout DiscardingTaskGroup, _ body: @escaping @Sendable () async -> Void) {
        group.addTask { await self.stopping(name, body) }
    }

    /// Runs `body`, named in ``unfinishedWork`` until it returns: what a stop at the deadline
    /// reports as not given way.
    private func stopping(_ name: String, _ body: () async -> Void) async {
        running.withLock { $0.parts[name, default: 0] += 1 }
        await body()
        running.withLock { state in
            state.parts[name, default: 1] -= 1
            if state.parts[name] == 0 { state.parts[name] = nil }
        }
        logger.debug("worker part stopped", metadata: ["part": "\(name)"])
    }

    /// Refuses to start when a topic of the pipeline is missing, instead of consuming nothing
    /// (a consumer of a missing topic waits silently) or losing what it would produce there.
    /// Waits while Kafka cannot be reached, until graceful shutdown.
    private func requireTopics() async throws {
        let kafka = configuration.kafka
        let admin = try kafka.makeAdmin(logger: logger)
        let findings = try await cancelWhenGracefulShutdown { [logger] in
            try await Retrying.run("reading the Kafka topics", logger: logger) {
                try await kafka.auditTopics(admin: admin, layout: kafka.topics)
            }
        }
        let missing = TopicAudit.missing(findings)
        guard missing.isEmpty else {
            let refusal = PipelineTopicsMissing(topics: missing.map(\.name), bootstrapServers: kafka.bootstrapServers)
            logger.critical("worker not started: \(refusal)")
            throw refusal
        }
        logger.debug("topics", metadata: ["kafka.topics": "\(findings.map(\.description))"])
    }

    /// Updates the connection-pool gauges every 2 seconds until graceful shutdown.
    private static func samplePools(_ clients: [APNsClient], metrics: PipelineMetrics) async {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            for statistics in APNsClient.PoolStatistics.summedByEnvironment(clients.flatMap { $0.poolStatistics() }) {
                metrics.pool(statistics)
            }
            try? await cancelWhenGracefulShutdown {
                try await Task.sleep(for: .seconds(2))
            }
        }
    }

    private func consumer(_ topic: String, role: WorkerRole, buffer: Int, metrics: PipelineMetrics) throws(KafkaError) -> KafkaConsumer {
        let kafka = configuration.kafka
        let group = role.group(prefix: kafka.groupPrefix)
        var properties = KafkaConfigurationProperties(kafka.properties)
        if role == .send, properties["queued.max.messages.kbytes"] == nil {
            properties["queued.max.messages.kbytes"] = String(Self.deliveryPrefetchKilobytes)
        }
        return try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: kafka.bootstrapServers,
                groupID: group,
                topics: [topic],
                clientID: "pushfleet-\(role.rawValue)",
                sessionTimeoutMilliseconds: kafka.sessionTimeoutMilliseconds,
                assignmentStrategy: kafka.assignmentStrategy,
                groupInstanceID: kafka.groupInstanceID.map { "\($0).\(role.rawValue)" },
                bufferCapacity: buffer,
                groupStateInterval: WorkerGroups.groupStateInterval,
                properties: properties),
            logger: logger,
            onRebalance: { metrics.rebalanced(group: group, $0) },
            onGroupState: { metrics.groupState(group: group, $0) })
    }

    /// What the send stage's consumer fetches ahead of its work: 16 MB, about 220 chunks of
    /// 1,000 tokens (4 s at 55,000 notifications/s). librdkafka's default, 64 MB, let a worker
    /// behind a 10,000,000-device broadcast hold 215 MB where one behind 1,000,000 held 95 MB:
    /// the backlog of `push.deliveries` grows with the audience, and the prefetch with it up to
    /// that cap. `kafka.properties` may set another value.
    static let deliveryPrefetchKilobytes = 16_384

    /// One client per distinct connections-per-pool setting: apps that share a setting share
    /// pools and provider tokens. Every client runs on `eventLoops`.
    private func makeAPNsClients(on eventLoops: MultiThreadedEventLoopGroup) throws(APNsError) -> (
        byApp: [String: APNsClient], distinct: [APNsClient]
    ) {
        let apns = configuration.apns
        var byConnections: [Int: APNsClient] = [:]
        var clients: [String: APNsClient] = [:]
        for app in apps.values {
            let connections = configuration.connectionsPerPool(for: app.settings)
            if byConnections[connections] == nil {
                byConnections[connections] = try APNsClient(
                    configuration: apns.clientConfiguration(connectionsPerPool: connections), eventLoopGroup: eventLoops,
                    logger: logger)
            }
            clients[app.id] = byConnections[connections]
        }
        return (clients, Array(byConnections.values))
    }
}
