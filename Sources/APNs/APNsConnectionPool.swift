import FlowControl
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL
import Synchronization

/// The connections of one (credential, environment): opens them spaced, reconnects with
/// backoff, hands out streams to the least-loaded connection and makes callers wait for a free
/// stream. The decisions live in ``APNsConnectionPoolStateMachine``; this type carries them out.
final class APNsConnectionPool: Sendable {
    /// Streams leased on one connection.
    struct Grant: Sendable {
        let connection: APNsConnection
        let streams: Int
    }

    /// A caller waiting for streams, its id and when it gives up.
    private struct Waiter: Sendable {
        let id: Int
        let deadline: NIODeadline
        let continuation: CheckedContinuation<Result<[Grant], APNsError>, Never>
    }
    private typealias StateMachine = APNsConnectionPoolStateMachine<Waiter>

    private struct State: ~Copyable {
        var machine: StateMachine
        var connections: [Int: APNsConnection] = [:]
        var nextWaiterID = 0
        var isShutdown = false
        /// Fails waiters past their deadline every ``waiterSweepInterval`` while any waits. A
        /// busy pool queues thousands of waiters a second; a NIO timer per waiter, cancelled
        /// when it is served, cost 6–7% of a worker's CPU (NIO finds a cancelled timer by
        /// searching its queue). A waiter now times out up to one interval late.
        var waiterSweep: RepeatedTask?
        /// Once a second while the pool runs: the state machine's ``APNsConnectionPoolStateMachine/tick()``.
        var sizingTick: RepeatedTask?
    }

    static let waiterSweepInterval = TimeAmount.milliseconds(50)

    private let state: Mutex<State>
    private let eventLoopGroup: any EventLoopGroup
    private let endpoint: APNsClientConfiguration.Endpoint
    private let sslContext: NIOSSLContext
    private let configuration: APNsClientConfiguration
    private let reconnectBackoff: ExponentialBackoff
    private let logger: Logger

    init(
        eventLoopGroup: any EventLoopGroup, endpoint: APNsClientConfiguration.Endpoint, sslContext: NIOSSLContext,
        configuration: APNsClientConfiguration, logger: Logger
    ) {
        self.state = Mutex(
            State(
                machine: StateMachine(sizing: configuration.poolSizing, maxWaiters: configuration.maxWaitersPerPool)))
        self.eventLoopGroup = eventLoopGroup
        self.endpoint = endpoint
        self.sslContext = sslContext
        self.configuration = configuration
        self.reconnectBackoff = ExponentialBackoff(
            base: configuration.reconnectBackoffBase, maximum: configuration.reconnectBackoffMax, jitter: APNsClient.backoffJitter)
        self.logger = logger
    }

    /// Waits for a free stream, at most `timeout`, for a request of `bytes` DATA bytes.
    func lease(timeout: Duration, bytes: Int = 0) async throws(APNsError) -> APNsConnection {
        try await lease(upTo: 1, bytes: bytes, timeout: timeout)[0].connection
    }

    /// Leases up to `wanted` streams: those free now, at once; when none is, waits (at most
    /// `timeout`) for the first to free up and takes every stream free then, up to `wanted`.
    /// Each stream goes back when it ends: its connection tells the pool
    /// (``APNsConnectionHandler/Events/streamsEnded``).
    func lease(upTo wanted: Int, bytes: Int = 0, timeout: Duration) async throws(APNsError) -> [Grant] {
        // Fast path: free streams now, without suspending.
        let (immediate, connects) = state.withLock { state -> ([Grant], [StateMachine.Connect]) in
            let (grants, connects) = state.machine.leaseIfAvailable(wanted: wanted, bytes: bytes)
            return (Self.resolve(grants, in: &state), connects)
        }
        open(connects)
        if !immediate.isEmpty { return immediate }

        let waiterID = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[Grant], APNsError>, Never>) in
                let waiter = Waiter(
                    id: waiterID, deadline: .now() + .nanoseconds(timeout.nanoseconds), continuation: continuation)
                let (result, connects, leased) = state.withLock { state in
                    let (result, connects) = state.machine.lease(waiterID: waiterID, waiter: waiter, wanted: wanted, bytes: bytes)
                    if case .queued = result, state.waiterSweep == nil {
                        state.waiterSweep = eventLoopGroup.any().scheduleRepeatedTask(
                            initialDelay: Self.waiterSweepInterval, delay: Self.waiterSweepInterval
                        ) { _ in self.failExpiredWaiters() }
                    }
                    if case .leased(let grants) = result {
                        return (result, connects, Self.resolve(grants, in: &state))
                    }
                    return (result, connects, [])
                }
                open(connects)
                switch result {
                case .leased:
                    continuation.resume(returning: leased.isEmpty ? .failure(APNsError(.connectionLost)) : .success(leased))
                case .queued:
                    break
                case .tooManyWaiters:
                    continuation.resume(returning: .failure(APNsError(.tooManyWaiters)))
                case .shutdown:
                    continuation.resume(returning: .failure(APNsError(.shutdown)))
                }
            }
        } onCancel: {
            failWaiter(waiterID, with: APNsError(.cancelled))
        }
        return try result.get()
    }

    /// The connections of the state machine's grants. A grant whose connection is not known
    /// (yet) gives its streams back.
    private static func resolve(_ grants: [StateMachine.Grant], in state: inout State) -> [Grant] {
        var resolved: [Grant] = []
        resolved.reserveCapacity(grants.count)
        for grant in grants {
            if let connection = state.connections[grant.connection] {
                resolved.append(Grant(connection: connection, streams: grant.streams))
            } else {
                state.machine.returnUnused(grant.connection, streams: grant.streams)
            }
        }
        return resolved
    }

    /// The pool's open connections, streams in flight and waiting callers right now, the
    /// connections it keeps and the round trip it measured.
    var statistics: (openConnections: Int, streamsInUse: Int, waiters: Int, targetConnections: Int, roundTrip: Duration?) {
        state.withLock { state in
            let figures = state.machine.statistics
            return (figures.openConnections, figures.streamsInUse, figures.waiters, state.machine.targetConnections, state.machine.roundTrip)
        }
    }

    /// Streams of a connection ended; waiters may take them. Connections call it (their
    /// ``APNsConnectionHandler/Events/streamsEnded``), once per read.
    private func release(connectionID: Int, streams: Int, quickestAnswer: TimeAmount?) {
        let quickest = quickestAnswer.map { Duration.nanoseconds($0.nanoseconds) }
        let (leases, close, connects) = state.withLock { state in
            let release = state.machine.releasing(connectionID, streams: streams, quickest: quickest)
            return (
                release.leases.map { ($0.waiter, Self.resolve($0.grants, in: &state)) }, release.close.flatMap { state.connections[$0] },
                release.connect
            )
        }
        resume(leases)
        close?.close()
        open(connects)
    }

    /// Once a second: a connection the demand no longer needs is given back (closed now when
    /// idle, else once its last stream ends).
    private func tick() {
        let idle = state.withLock { state in state.machine.tick().flatMap { state.connections[$0] } }
        if let idle {
            logger.debug("APNs pool gives back a connection the demand no longer needs")
            idle.close()
        }
    }

    /// Starts the sizing tick of a pool that sizes itself (once).
    private func startSizingTick(in state: inout State) {
        guard !state.machine.sizing.isFixed, state.sizingTick == nil, !state.isShutdown else { return }
        state.sizingTick = eventLoopGroup.any().scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { [weak self] _ in
            self?.tick()
        }
    }

    /// Closes every connection and fails every waiter.
    func shutdown() async {
        let (waiters, connections) = state.withLock { state in
            state.isShutdown = true
            state.waiterSweep?.cancel()
            state.waiterSweep = nil
            state.sizingTick?.cancel()
            state.sizingTick = nil
            let (waiters, ids) = state.machine.shutdown()
            return (waiters, ids.compactMap { state.connections[$0] })
        }
        for waiter in waiters {
            finish(waiter, .failure(APNsError(.shutdown)))
        }
        // All at once: a connection to a server that went silent takes TLS's shutdown timeout
        // to close, and one after another they would add up.
        for connection in connections {
            connection.close()
        }
        for connection in connections {
            try? await connection.channel.closeFuture.get()
        }
    }

    private func failWaiter(_ waiterID: Int, with error: APNsError) {
        let waiter = state.withLock { $0.machine.cancelWaiter(waiterID) }
        if let waiter { finish(waiter, .failure(error)) }
    }

    /// Fails the waiters past their deadline with a timeout; stops sweeping when none waits.
    private func failExpiredWaiters() {
        let now = NIODeadline.now()
        let expired = state.withLock { state in
            let expired = state.machine.removeWaiters { $0.deadline <= now }
            if state.machine.waiterCount == 0 {
                state.waiterSweep?.cancel()
                state.waiterSweep = nil
            }
            return expired
        }
        for waiter in expired {
            finish(waiter, .failure(APNsError(.timeout)))
        }
    }

    private func resume(_ leases: [(Waiter, [Grant])]) {
        for (waiter, grants) in leases {
            finish(waiter, grants.isEmpty ? .failure(APNsError(.connectionLost)) : .success(grants))
        }
    }

    private func finish(_ waiter: Waiter, _ result: Result<[Grant], APNsError>) {
        waiter.continuation.resume(returning: result)
    }

    private func open(_ connects: [StateMachine.Connect]) {
        for connect in connects {
            let delay: Duration
            switch connect.delay {
            case .immediately: delay = .zero
            case .spacing(let slots): delay = configuration.connectionSpacing * slots
            case .backoff(let failures): delay = reconnectBackoff.randomDelay(attempt: failures)
            }
            let eventLoop = eventLoopGroup.next()
            if delay == .zero {
                eventLoop.execute { self.open(id: connect.id, on: eventLoop) }
            } else {
                eventLoop.scheduleTask(in: .nanoseconds(delay.nanoseconds)) { self.open(id: connect.id, on: eventLoop) }
            }
        }
    }

    private func open(id: Int, on eventLoop: any EventLoop) {
        let opened = ContinuousClock.now
        let events = APNsConnectionHandler.Events(
            ready: { maxStreams, window in
                let handshake = ContinuousClock.now - opened
                let (leases, connects) = self.state.withLock { state in
                    let (leases, connects) = state.machine.connecting(id, maxStreams: maxStreams, window: window, handshake: handshake)
                    self.startSizingTick(in: &state)
                    return (leases.map { ($0.waiter, Self.resolve($0.grants, in: &state)) }, connects)
                }
                self.resume(leases)
                self.open(connects)
            },
            maxStreamsChanged: { maxStreams in
                let (leases, connects) = self.state.withLock { state in
                    let (leases, connects) = state.machine.streamLimitChanged(id, maxStreams: maxStreams)
                    return (leases.map { ($0.waiter, Self.resolve($0.grants, in: &state)) }, connects)
                }
                self.resume(leases)
                self.open(connects)
            },
            windowGrew: { window in
                let leases = self.state.withLock { state in
                    state.machine.windowGrew(id, window: window).map { ($0.waiter, Self.resolve($0.grants, in: &state)) }
                }
                self.resume(leases)
            },
            goingAway: { errorCode, reason in
                // No new streams go to this connection; a replacement opens now. APNs says why
                // (IdleTimeout, Shutdown, …): worth a line when it is not a routine close.
                self.logger.log(
                    level: errorCode == .noError ? .debug : .info, "APNs sent GOAWAY",
                    metadata: ["apns.goaway.error": "\(errorCode)", "apns.goaway.reason": "\(reason ?? "none")"])
                self.retire(id)
            },
            unanswered: {
                self.logger.debug("APNs connection left a request unanswered; no new streams until it answers a PING")
                self.open(self.state.withLock { $0.machine.unanswered(id) })
            },
            answered: {
                let leases = self.state.withLock { state in
                    state.machine.answered(id).map { ($0.waiter, Self.resolve($0.grants, in: &state)) }
                }
                self.resume(leases)
            },
            unresponsive: {
                self.logger.info("APNs connection did not answer a PING; replacing it")
                self.retire(id)
            },
            streamsEnded: { count, quickest in self.release(connectionID: id, streams: count, quickestAnswer: quickest) },
            closed: { self.closed(id) })
        let timeout = TimeAmount.nanoseconds(configuration.connectTimeout.nanoseconds)
        APNsConnection.connect(
            id: id, eventLoop: eventLoop, endpoint: endpoint, sslContext: sslContext, connectTimeout: timeout,
            pingInterval: configuration.pingInterval.map { .nanoseconds($0.nanoseconds) },
            pingTimeout: .nanoseconds(configuration.pingTimeout.nanoseconds), events: events
        ).whenComplete { result in
            switch result {
            case .success(let connection):
                let isShutdown = self.state.withLock { state in
                    state.connections[id] = connection
                    return state.isShutdown
                }
                if isShutdown {
                    connection.close()
                    return
                }
                // TLS and the server's SETTINGS must follow within the connect timeout.
                eventLoop.scheduleTask(in: timeout) {
                    let isReady = self.state.withLock { $0.machine.isReady(id) }
                    if !isReady { connection.close() }
                }
            case .failure(let error):
                self.logger.debug("APNs connection failed", metadata: ["error": "\(error)"])
                self.closed(id)
            }
        }
    }

    /// Gives connection `id` no new streams and opens its replacement.
    private func retire(_ id: Int) {
        let connect = state.withLock { $0.machine.goingAway(id) }
        open(connect.map { [$0] } ?? [])
    }

    private func closed(_ id: Int) {
        let (connect, failed) = state.withLock { state in
            state.connections[id] = nil
            return state.machine.closed(id)
        }
        for waiter in failed {
            finish(waiter, .failure(APNsError(.connectFailed)))
        }
        open(connect.map { [$0] } ?? [])
    }
}
