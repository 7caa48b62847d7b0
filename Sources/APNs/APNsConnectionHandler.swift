import HTTP2Frames
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOTLS

/// Runs one APNs connection: the I/O around ``APNsConnectionStateMachine``, which speaks
/// HTTP/2 over the TLS stream. The handler hands it the bytes read and the requests sent,
/// carries out what it decides (answer a request, tell the pool, close the channel), writes its
/// frames once per tick, and runs the timers: the keepalive PING, the PING's deadline and the
/// sweep of request deadlines.
package final class APNsConnectionHandler: ChannelDuplexHandler {
    package typealias InboundIn = ByteBuffer
    package typealias OutboundIn = Never
    package typealias OutboundOut = ByteBuffer

    /// What the pool hears about its connection. Called on the connection's event loop.
    package struct Events: Sendable {
        /// The server's first SETTINGS: its stream limit, and the most DATA it lets the
        /// connection have in flight (its connection window).
        var ready: @Sendable (_ maxStreams: Int, _ window: Int) -> Void
        var maxStreamsChanged: @Sendable (_ maxStreams: Int) -> Void
        /// The server raised the connection window beyond what it granted before.
        var windowGrew: @Sendable (_ window: Int) -> Void
        /// GOAWAY arrived: its error code and APNs's reason (the JSON `reason` of the debug
        /// data, such as `IdleTimeout` or `Shutdown`), when it gave one.
        var goingAway: @Sendable (_ errorCode: HTTP2ErrorCode, _ reason: String?) -> Void
        /// A request went unanswered past its deadline, and a PING is out to prove the
        /// connection alive: it should take no new streams until ``answered``. Told before the
        /// pool hears that the timed-out streams ended, so that they do not go to new requests
        /// on this connection.
        var unanswered: @Sendable () -> Void
        /// The connection answered the PING that ``unanswered`` announced.
        var answered: @Sendable () -> Void
        /// A PING went unanswered: the connection takes no new streams and is being closed.
        var unresponsive: @Sendable () -> Void
        /// Streams ended (answered, refused, timed out or lost): told once per read, or once
        /// per other event that ends streams, with how many, not once per stream, and how long
        /// the quickest of the answers took (`nil` without an answer).
        var streamsEnded: @Sendable (_ count: Int, _ quickestAnswer: TimeAmount?) -> Void
        var closed: @Sendable () -> Void

        package init(
            ready: @escaping @Sendable (_ maxStreams: Int, _ window: Int) -> Void,
            maxStreamsChanged: @escaping @Sendable (_ maxStreams: Int) -> Void,
            windowGrew: @escaping @Sendable (_ window: Int) -> Void = { _ in },
            goingAway: @escaping @Sendable (_ errorCode: HTTP2ErrorCode, _ reason: String?) -> Void,
            unanswered: @escaping @Sendable () -> Void = {},
            answered: @escaping @Sendable () -> Void = {},
            unresponsive: @escaping @Sendable () -> Void,
            streamsEnded: @escaping @Sendable (_ count: Int, _ quickestAnswer: TimeAmount?) -> Void,
            closed: @escaping @Sendable () -> Void
        ) {
            self.ready = ready
            self.maxStreamsChanged = maxStreamsChanged
            self.windowGrew = windowGrew
            self.goingAway = goingAway
            self.unanswered = unanswered
            self.answered = answered
            self.unresponsive = unresponsive
            self.streamsEnded = streamsEnded
            self.closed = closed
        }
    }

    /// Why in-flight requests failed when a PING went unanswered.
    struct KeepaliveTimeout: Error, CustomStringConvertible {
        var description: String { "the connection did not acknowledge a PING in time" }
    }

    /// TLS did not agree on HTTP/2.
    struct NotHTTP2: Error, CustomStringConvertible {
        var negotiatedProtocol: String?
        var description: String { "the server did not negotiate h2 over ALPN (got \(negotiatedProtocol ?? "nothing"))" }
    }

    private typealias StateMachine = APNsConnectionStateMachine<APNsStreamRequest>

    private let events: Events
    private let pingInterval: TimeAmount?
    private let pingTimeout: TimeAmount
    private var context: ChannelHandlerContext?
    private var state = StateMachine()
    private let flushes = FlushCoalescer()

    /// Streams answered since the pool last heard of it (``reportEndedStreams()``).
    private var endedStreams = 0

    private var keepalive: RepeatedTask?
    private var timeoutSweep: RepeatedTask?
    private var pingDeadline: Scheduled<Void>?
    /// A request timed out and the pool was told (``Events/unanswered``); the next PING
    /// acknowledgement tells it the connection is alive.
    private var provingAlive = false

    package init(events: Events, pingInterval: TimeAmount?, pingTimeout: TimeAmount) {
        self.events = events
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { writePreface(context: context) }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    package func channelActive(context: ChannelHandlerContext) {
        writePreface(context: context)
        context.fireChannelActive()
    }

    private func writePreface(context: ChannelHandlerContext) {
        if state.writePreface() { writeOutbound(context: context) }
    }

    // MARK: Requests

    /// Sends a request on a new stream; `promise` gets the outcome.
    package func send(headers: HPACKHeaders, payload: ByteBuffer, timeout: TimeAmount, promise: EventLoopPromise<APNsStreamOutcome>) {
        send(headers: headers, payload: payload, timeout: timeout, request: .promise(promise))
    }

    /// Sends a request on a new stream; `request` gets the outcome.
    func send(headers: HPACKHeaders, payload: ByteBuffer, timeout: TimeAmount, request: APNsStreamRequest) {
        guard let context, context.channel.isActive else {
            answer(request, .refused)
            reportEndedStreams()
            return
        }
        switch state.send(headers: headers, payload: payload, timeout: timeout, now: context.eventLoop.now, request: request) {
        case .opened:
            startTimeoutSweep(context: context)
            flushes.schedule(on: context.eventLoop) { self.writeOutbound(context: context) }
        case .refused:
            answer(request, .refused)
            reportEndedStreams()
        case .timedOut:
            answer(request, .timedOut)
            reportEndedStreams()
        }
    }

    // MARK: Reading

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        state.read(unwrapInboundIn(data))
        do {
            while let action = try state.nextAction() {
                perform(action, context: context)
            }
        } catch {
            connectionError(error, context: context)
        }
    }

    package func channelReadComplete(context: ChannelHandlerContext) {
        writeOutbound(context: context)
        reportEndedStreams()
        context.fireChannelReadComplete()
    }

    /// Hands `outcome` to the request; the pool hears of the stream's end with the others of
    /// the same read (``reportEndedStreams()``).
    private func answer(_ request: APNsStreamRequest, _ outcome: APNsStreamOutcome) {
        endedStreams += 1
        request.answer(outcome)
    }

    /// Tells the pool how many streams ended since it last heard: one lock of the pool per
    /// read, where a lock per answer was contended by every connection's event loop.
    private func reportEndedStreams() {
        guard endedStreams > 0 else { return }
        let count = endedStreams
        endedStreams = 0
        events.streamsEnded(count, state.takeQuickestAnswer(now: .now()))
    }

    private func perform(_ action: StateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .answer(let request, let outcome):
            answer(request, outcome)
            closeIfDrained(context: context)
        case .ready(let maxStreams, let window):
            events.ready(maxStreams, window)
            startKeepalive(context: context)
        case .windowGrew(let window):
            events.windowGrew(window)
        case .maxStreamsChanged(let maxStreams):
            events.maxStreamsChanged(maxStreams)
        case .goingAway(let code, let reason, let refused):
            // The pool retires this connection first, so the refused requests go to another one.
            events.goingAway(code, reason)
            for request in refused { answer(request, .refused) }
            reportEndedStreams()
            closeIfDrained(context: context)
        case .pingAcknowledged:
            pingDeadline?.cancel()
            pingDeadline = nil
            if provingAlive {
                provingAlive = false
                events.answered()
            }
        }
    }

    /// After GOAWAY the connection closes once its last stream has its answer.
    private func closeIfDrained(context: ChannelHandlerContext) {
        guard state.closeIfDrained() else { return }
        writeOutbound(context: context)
        context.close(promise: nil)
    }

    // MARK: Failures

    /// The peer broke the protocol, or the connection failed below HTTP/2: tell the peer (GOAWAY),
    /// fail what is in flight (the server may have it) and close.
    private func connectionError(_ error: any Error, context: ChannelHandlerContext) {
        guard let inFlight = state.close(error: error as? HTTP2ConnectionError) else { return }
        writeOutbound(context: context)
        for request in inFlight { answer(request, .connectionLost(error)) }
        reportEndedStreams()
        context.close(promise: nil)
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted(let negotiatedProtocol) = event, negotiatedProtocol != "h2" {
            connectionError(NotHTTP2(negotiatedProtocol: negotiatedProtocol), context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connectionError(error, context: context)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        keepalive?.cancel()
        timeoutSweep?.cancel()
        timeoutSweep = nil
        pingDeadline?.cancel()
        for request in state.close(error: nil) ?? [] { answer(request, .connectionLost(ChannelError.eof)) }
        reportEndedStreams()
        events.closed()
        context.fireChannelInactive()
    }

    /// The peer went silent: fail what is in flight now (closing waits for a TLS shutdown the
    /// peer will not answer), take no new streams, and close.
    private func keepaliveFailed(context: ChannelHandlerContext) {
        guard let inFlight = state.close(error: nil) else { return }
        keepalive?.cancel()
        events.unresponsive()
        for request in inFlight { answer(request, .connectionLost(KeepaliveTimeout())) }
        reportEndedStreams()
        context.close(promise: nil)
    }

    // MARK: Writing

    private func writeOutbound(context: ChannelHandlerContext) {
        guard let bytes = state.takeOutbound() else { return }
        context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
    }

    // MARK: Timers

    /// Checks the deadlines every ``timeoutSweepInterval`` while any request is in flight. A
    /// timer per request cost a tenth of the client's CPU (NIO cancels a timer by searching its
    /// queue); a request times out up to one interval late.
    private func startTimeoutSweep(context: ChannelHandlerContext) {
        guard timeoutSweep == nil else { return }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timeoutSweep = context.eventLoop.scheduleRepeatedTask(
            initialDelay: Self.timeoutSweepInterval, delay: Self.timeoutSweepInterval
        ) { _ in
            let (handler, context) = loopBound.value
            handler.sweepTimeouts(context: context)
        }
    }

    static let timeoutSweepInterval = TimeAmount.milliseconds(50)

    /// Answers the requests past their deadline with a timeout (their streams are reset); stops
    /// sweeping when nothing is in flight.
    private func sweepTimeouts(context: ChannelHandlerContext) {
        let expired = state.expire(now: context.eventLoop.now)
        if !expired.isEmpty {
            // A request that got no answer in time makes the connection prove it is alive: a
            // peer gone silent (a dead network path) fails the PING and the connection is
            // replaced now, not at the next keepalive, which may be a minute away. Until the
            // PING is answered the pool gives it no new streams, those the timeouts free
            // included: they would wait out another deadline on a silent peer.
            if !provingAlive {
                provingAlive = true
                events.unanswered()
            }
            for request in expired { answer(request, .timedOut) }
            reportEndedStreams()
            sendPing(context: context)
            writeOutbound(context: context)
            closeIfDrained(context: context)
        }
        if state.streamsInFlight == 0 {
            timeoutSweep?.cancel()
            timeoutSweep = nil
        }
    }

    private func startKeepalive(context: ChannelHandlerContext) {
        guard let pingInterval else { return }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        keepalive = context.eventLoop.scheduleRepeatedTask(initialDelay: pingInterval, delay: pingInterval) { _ in
            let (handler, context) = loopBound.value
            handler.sendPing(context: context)
        }
    }

    /// Sends a PING unless one is outstanding; closes the connection when it stays unanswered.
    private func sendPing(context: ChannelHandlerContext) {
        guard state.ping() else { return }
        pingDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: pingTimeout) {
            self.keepaliveFailed(context: context)
        }
        writeOutbound(context: context)
    }
}
