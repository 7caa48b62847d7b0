import Foundation
import Kafka
public import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
public import PushConfiguration
import PushCore
import PushJobs
import PushPipeline
import PushStore
import Redis
public import ServiceLifecycle

/// `pushfleet gateway`: the online channel's WebSocket server on `gateway.host:gateway.port`.
/// App instances connect to `GET /v1/apps/{app}/connect` with a connect token; each connection
/// is pinged, limited and recorded in presence (docs/online.md), and gets the online sends of
/// online-first jobs from `push.online` (``OnlineDeliveryStage``). On graceful shutdown it stops
/// accepting, tells every client to reconnect (1001), waits for them to close (10 s at most;
/// the sends still waiting for an ack on them are handed back to APNs), writes their presence
/// releases, then leaves its consumer group before it returns.
public struct PushGatewayServer: Service {
    let configuration: PushFleetConfiguration
    let tokens: ConnectToken
    let logger: Logger
    let onListening: @Sendable (Int) async -> Void

    /// How long a drain waits for the clients to close.
    static let drainDeadline = Duration.seconds(10)

    /// - Throws: A `ConfigurationError` keyed `gateway.secret-file` when the connect-token key
    ///   is not set or cannot be read: a gateway without it serves nothing, so it does not start.
    public init(
        configuration: PushFleetConfiguration, logger: Logger, onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws(ConfigurationError) {
        self.configuration = configuration
        self.tokens = ConnectToken(secret: try configuration.gateway.resolvedSecret())
        self.logger = logger
        self.onListening = onListening
    }

    /// The gateway's id: `gateway.id`, else the host name in the id's alphabet (64 bytes at most).
    static func defaultID() -> String {
        let name = ProcessInfo.processInfo.hostName.map { character -> Character in
            character.isASCII && (character.isLetter || character.isNumber || ".-_".contains(character)) ? character : "-"
        }
        let id = String(name.prefix(64))
        return id.isEmpty ? "gateway" : id
    }

    public func run() async throws {
        let settings = configuration.gateway
        let id = settings.id ?? Self.defaultID()
        let redis = try configuration.redis.makeClient(clientName: "pushfleet-gateway", logger: logger)
        let schedule = HeartbeatSchedule(pingInterval: settings.pingInterval, idleTimeout: settings.idleTimeout)
        let writer = PresenceWriter(store: PresenceStore(client: redis), lease: schedule.presenceLease, logger: logger)
        let connections = GatewayConnections()
        let acks = OnlineAcks()
        let (jobs, inbox) = (JobStore(client: redis), InboxStore(client: redis))
        let resend = ResendBuffer(client: redis, policy: configuration.resend.policy)
        let replay = InboxReplay(
            inbox: inbox, jobs: jobs, resend: resend, acks: acks, ackTimeout: settings.ackTimeout, frames: ReplayFrames(), logger: logger)
        let gateway = GatewayContext(
            id: id, settings: settings, schedule: schedule, tokens: tokens,
            apps: Set(configuration.apps.keys), connections: connections, presence: writer, acks: acks, replay: replay,
            now: { Int64(Date().timeIntervalSince1970) })
        let consumer: KafkaConsumer
        do {
            consumer = try makeConsumer(id: id)
        } catch {
            await redis.shutdown()
            throw error
        }
        let stage = OnlineDeliveryStage(
            gateway: id, connections: connections, acks: acks, ackTimeout: settings.ackTimeout, jobs: jobs,
            resend: resend, inbox: inbox, logger: logger, clock: StoreClock.system)
        let numbers = ConnectionNumbers()
        let server: any Channel
        do {
            server = try await Self.bind(gateway: gateway, numbers: numbers, host: settings.host, port: settings.port)
        } catch {
            await consumer.close()
            await redis.shutdown()
            throw error
        }
        let port = server.localAddress?.port ?? 0
        logger.info("gateway listening", metadata: ["port": "\(port)", "gateway": "\(id)"])
        await onListening(port)

        let background = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await writer.run() }
                group.addTask {
                    await MessageLoop.run(consumer, concurrency: settings.deliveriesInFlight, consumed: { _ in }, handler: stage.handle)
                }
                group.addTask {
                    let store = PresenceStore(client: redis)
                    while !Task.isCancelled {
                        let online = connections.onlineDevices
                        let counts = Dictionary(uniqueKeysWithValues: gateway.apps.map { ($0, online[$0] ?? 0) })
                        for (app, devices) in counts { GatewayMetrics.online(app: app, devices: devices) }
                        // For the console's overview; a count that cannot be written now is written next second.
                        try? await store.recordOnlineCounts(gateway: id, counts, at: StoreClock.system())
                        try? await Task.sleep(for: .seconds(1))
                    }
                }
            }
        }
        await withGracefulShutdownHandler {
            try? await server.closeFuture.get()
        } onGracefulShutdown: {
            server.close(promise: nil)
        }
        await drain(connections)
        await consumer.close()
        background.cancel()
        await background.value
        await redis.shutdown()
    }

    /// The gateway's consumer of `push.online`: a group of its own (`<group-prefix>.gateway.<id>`).
    /// A new group starts at the oldest offset, so a send published while the gateway was joining
    /// is not skipped; what it reads of the topic's past is older than the ack timeout and is
    /// left unread (``OnlineDeliveryPlan/isStale(publishedAt:now:ackTimeout:)``).
    private func makeConsumer(id: String) throws -> KafkaConsumer {
        let kafka = configuration.kafka
        return try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: kafka.bootstrapServers, groupID: "\(kafka.groupPrefix).gateway.\(id)", topics: [PushTopic.online],
                clientID: "pushfleet-gateway", sessionTimeoutMilliseconds: kafka.sessionTimeoutMilliseconds,
                assignmentStrategy: kafka.assignmentStrategy, autoOffsetReset: "earliest",
                bufferCapacity: 2 * configuration.gateway.deliveriesInFlight,
                properties: KafkaConfigurationProperties(kafka.properties)),
            logger: logger,
            onRebalance: { [logger] event in
                if case .assigned(let partitions) = event {
                    logger.info("gateway consuming push.online", metadata: ["partitions": "\(partitions.count)"])
                }
            })
    }

    /// Asks every open connection to reconnect elsewhere and waits until they have closed.
    private func drain(_ connections: GatewayConnections) async {
        let channels = connections.channels
        guard !channels.isEmpty else { return }
        logger.info("gateway draining", metadata: ["connections": "\(channels.count)"])
        for channel in channels {
            channel.pipeline.fireUserInboundEventTriggered(GatewayCloseEvent(close: .goingAway))
        }
        // Until each client answered the close (or its 2 s closing handshake ran out).
        let deadline = ContinuousClock.now + Self.drainDeadline
        while channels.contains(where: \.isActive), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        let open = channels.filter(\.isActive).count
        if open > 0 {
            logger.warning("gateway drain deadline passed", metadata: ["connections": "\(open)"])
        }
    }

    static func bind(gateway: GatewayContext, numbers: ConnectionNumbers, host: String, port: Int) async throws -> any Channel {
        let maxFrameBytes = gateway.settings.maxFrameBytes
        return try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                let upgrader = NIOWebSocketServerUpgrader(
                    maxFrameSize: maxFrameBytes, automaticErrorHandling: false,
                    shouldUpgrade: { channel, head in
                        let request = GatewayRequest(target: head.uri, authorization: head.headers.first(name: "authorization"))
                        return channel.eventLoop.makeSucceededFuture(request == nil ? nil : HTTPHeaders())
                    },
                    upgradePipelineHandler: { channel, head in
                        let request =
                            GatewayRequest(target: head.uri, authorization: head.headers.first(name: "authorization"))
                            ?? GatewayRequest(app: "", token: nil)
                        let number = numbers.next()
                        return channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                GatewayConnectionHandler(gateway: gateway, request: request, connection: number))
                        }
                    })
                return channel.eventLoop.makeCompletedFuture {
                    let refusal = GatewayHTTPRefusal()
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (
                            upgraders: [upgrader],
                            completionHandler: { context in
                                context.pipeline.syncOperations.removeHandler(refusal, promise: nil)
                            }
                        ))
                    try channel.pipeline.syncOperations.addHandler(refusal)
                }
            }
            .bind(host: host, port: port).get()
    }
}
