import Atomics
import FlowControl
import HTTP2Frames
import NIOCore
import NIOHPACK

/// One client connection of the simulator: the I/O around ``APNsSimulatorHTTP2StateMachine``
/// (bytes in, requests to ``APNsSimulatorRequestHandler``, answers out in one write per tick),
/// its authentication state, and the connection-level faults (GOAWAY, reset, silence, idle
/// timeout). Confined to the channel's event loop.
final class APNsSimulatorConnection: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = Never
    typealias OutboundOut = ByteBuffer

    let shared: APNsSimulatorSharedState
    let loopState: APNsSimulatorLoopState
    var authentication = APNsSimulatorConnectionAuthentication()
    private var state: APNsSimulatorHTTP2StateMachine
    private var requests: APNsSimulatorRequestHandler!
    private var context: ChannelHandlerContext?
    private let flushes = FlushCoalescer()
    /// Whether the full stream limit has been advertised.
    private(set) var advertisesFullStreamLimit: Bool
    /// The stream limit is down to 1 after a refusal (``APNsSimulatorConfiguration/oneStreamAfterRefusal``).
    private var limitedByRefusal = false
    /// Streams the client has opened on this connection.
    private(set) var streamsOpened = 0
    /// Set once the unresponsive fault fired: nothing is read or answered any more.
    private(set) var isUnresponsive = false
    private(set) var isGoingAway = false
    /// Set once the reset fault fired: nothing more is answered on this connection.
    private(set) var isResetting = false
    private var isClosing = false
    private var lastActivity = NIODeadline.now()
    private var idleCheck: RepeatedTask?
    /// Acceptances answered but not written yet: they count once their answer reached the socket,
    /// so that an answer lost with its connection is not counted as delivered.
    private var unwritten = (accepted: 0, keys: [APNsSimulatorLoopState.NotificationKey]())

    init(shared: APNsSimulatorSharedState, eventLoop: any EventLoop, advertisesFullStreamLimit: Bool) {
        self.shared = shared
        self.loopState = shared.loopState(for: eventLoop)
        self.advertisesFullStreamLimit = advertisesFullStreamLimit
        self.state = APNsSimulatorHTTP2StateMachine(
            maxConcurrentStreams: advertisesFullStreamLimit ? Int(shared.configuration.maxConcurrentStreams) : 1,
            profile: shared.configuration.http2)
        self.requests = APNsSimulatorRequestHandler(connection: self)
    }

    /// The highest stream id the client has opened: the last stream a GOAWAY promises to serve.
    var highestStreamID: UInt32 { state.highestStreamID }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        state.writePreface()
        writeOutbound(context: context)
        startIdleCheck(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleCheck?.cancel()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleCheck?.cancel()
        context.fireChannelInactive()
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isUnresponsive, !isClosing else { return }
        state.read(unwrapInboundIn(data))
        do {
            while !isUnresponsive, !isClosing, let action = try state.nextAction() {
                perform(action, context: context)
            }
        } catch {
            state.goAway(lastStreamID: state.highestStreamID, errorCode: error.code, reason: nil)
            closeAfterFlush()
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        writeOutbound(context: context)
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func perform(_ action: APNsSimulatorHTTP2StateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .streamOpened:
            if let limit = loopState.faults.unresponsiveAfterStreams, streamsOpened >= limit {
                becomeUnresponsive()
                return
            }
            streamsOpened += 1
            lastActivity = .now()
        case .request(let streamID, let headers, let body):
            lastActivity = .now()
            requests.requestComplete(streamID: streamID, headers: headers, body: body, context: context)
        case .streamClosed:
            streamEnded()
        case .ping:
            loopState.pings += 1
        }
    }

    // MARK: Answers

    /// An answer to a request.
    enum Answer {
        /// 200; `key` identifies the notification for duplicate counting (when tracked). It counts
        /// as accepted once the answer reached the socket.
        case accepted(key: APNsSimulatorLoopState.NotificationKey?)
        /// An error status with APNs's JSON reason, and a `Retry-After` header when given.
        case rejected(status: Int, body: ByteBuffer, retryAfter: String?)
        /// A channel management or broadcast answer, with its own headers.
        case channel(status: Int, headers: [(String, String)], body: ByteBuffer?)
    }

    /// Answers a stream; dropped when the stream is gone (reset by the client) or the
    /// connection is resetting. Returns whether the answer was written.
    func respond(streamID: UInt32, apnsID: String?, _ answer: Answer) -> Bool {
        guard !isResetting, !isClosing, let context, context.channel.isActive else { return false }
        let written: Bool
        switch answer {
        case .accepted(let key):
            written = state.respond(streamID: streamID, status: 200, apnsID: apnsID, body: nil)
            if written {
                unwritten.accepted += 1
                if let key { unwritten.keys.append(key) }
                if limitedByRefusal {
                    limitedByRefusal = false
                    state.setMaxConcurrentStreams(Int(shared.configuration.maxConcurrentStreams))
                }
            }
        case .rejected(let status, let body, let retryAfter):
            written = state.respond(streamID: streamID, status: status, apnsID: apnsID, retryAfter: retryAfter, body: body)
            if written, shared.configuration.oneStreamAfterRefusal, advertisesFullStreamLimit, !limitedByRefusal {
                limitedByRefusal = true
                state.setMaxConcurrentStreams(1)
            }
        case .channel(let status, let headers, let body):
            written = state.respond(streamID: streamID, status: status, apnsID: apnsID, headers: headers, body: body)
        }
        guard written else { return false }
        flushes.schedule(on: context.eventLoop) { self.writeOutbound(context: context) }
        streamEnded()
        return true
    }

    private func streamEnded() {
        lastActivity = .now()
        if isGoingAway, state.openStreams == 0 {
            closeAfterFlush()
        }
    }

    private func writeOutbound(context: ChannelHandlerContext) {
        guard let bytes = state.takeOutbound() else { return }
        context.writeAndFlush(wrapOutboundOut(bytes), promise: writtenPromise(context: context))
    }

    /// The promise of a write that carries acceptances: they count when it succeeds.
    private func writtenPromise(context: ChannelHandlerContext) -> EventLoopPromise<Void>? {
        guard unwritten.accepted > 0 else { return nil }
        let (accepted, keys) = unwritten
        unwritten = (0, [])
        let loopState = self.loopState
        let promise = context.eventLoop.makePromise(of: Void.self)
        promise.futureResult.assumeIsolated().whenSuccess {
            loopState.accepted += accepted
            for key in keys { loopState.acceptances[key, default: 0] += 1 }
        }
        return promise
    }

    // MARK: Connection faults and APNs's behaviour

    /// After the first authenticated success, raise `SETTINGS_MAX_CONCURRENT_STREAMS` as Apple does.
    func advertiseFullStreamLimit() {
        guard !advertisesFullStreamLimit else { return }
        advertisesFullStreamLimit = true
        state.setMaxConcurrentStreams(Int(shared.configuration.maxConcurrentStreams))
    }

    /// Sends GOAWAY: streams up to `lastStreamID` are still answered, later ones are refused,
    /// and the connection closes once the answered ones are done. Pass ``highestStreamID`` so
    /// that no stream the server has started is dropped (as APNs does).
    func goAway(lastStreamID: UInt32, errorCode: HTTP2WireErrorCode, reason: String?) {
        guard !isGoingAway, !isResetting, let context else { return }
        isGoingAway = true
        state.goAway(lastStreamID: lastStreamID, errorCode: errorCode, reason: reason)
        writeOutbound(context: context)
        if state.openStreams == 0 {
            closeAfterFlush()
        }
    }

    /// Stops reading: later frames, PINGs included, stay unread and unanswered, and the
    /// connection stays open until the client closes it.
    func becomeUnresponsive() {
        guard !isUnresponsive, let context else { return }
        isUnresponsive = true
        loopState.unresponsiveConnections += 1
        context.channel.setOption(.autoRead, value: false).whenFailure { _ in }
    }

    /// Drops the connection without GOAWAY. Everything already written is flushed first, so
    /// answered streams stay answered; the rest get no answer.
    func reset() {
        guard !isResetting else { return }
        isResetting = true
        closeAfterFlush()
    }

    /// Closes once everything written so far has reached the socket.
    private func closeAfterFlush() {
        guard !isClosing, let context else { return }
        isClosing = true
        state.ping()
        let bytes = state.takeOutbound() ?? ByteBuffer()
        let channel = context.channel
        let promise = writtenPromise(context: context) ?? context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(bytes), promise: promise)
        promise.futureResult.whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    private func startIdleCheck(context: ChannelHandlerContext) {
        guard let idleTimeout = shared.configuration.idleTimeout else { return }
        let timeout = TimeAmount.nanoseconds(idleTimeout.nanoseconds)
        idleCheck = context.eventLoop.scheduleRepeatedTask(initialDelay: timeout, delay: timeout) { [self] task in
            guard state.openStreams == 0, NIODeadline.now() - lastActivity >= timeout else { return }
            task.cancel()
            shared.idleTimeouts.wrappingIncrement(ordering: .relaxed)
            goAway(lastStreamID: HTTP2WireFrame.maxStreamID, errorCode: .noError, reason: "IdleTimeout")
        }
    }
}

// Each instance belongs to one channel's event loop and is only touched there.
extension APNsSimulatorConnection: @unchecked Sendable {}
