import APNsCore
import CoreMetrics
import NIOCore
import NIOWebSocket
import PushConfiguration
import PushStore

/// Sent through a connection's pipeline to close it from outside its event loop.
struct GatewayCloseEvent: Sendable {
    var close: GatewayClose
}

/// Sent through a connection's pipeline to write an online send (a `push` frame) to it; the
/// delivery stage expects its ack (``OnlineAcks``) before.
struct GatewayPushEvent: Sendable {
    var frame: [UInt8]
}

/// One app instance's WebSocket connection, confined to its channel's event loop: the connect
/// token is checked as the handler is added (before anything else is read), then the connection
/// is registered (presence claimed, an older connection of the device closed), welcomed and
/// pinged on its slice of the interval. Every frame from the client counts as a sign of life
/// and takes a permit of its rate limit, except the ack of a send it was written (the gateway's
/// own sends set that pace); whatever the gateway refuses ends with a close frame naming why
/// (``GatewayClose``). No frame can throw past this handler. Online sends are written as
/// `push` frames (the device's inbox first, ``InboxReplay``); their acks go to ``OnlineAcks``, and
/// a connection that ends loses the sends still waiting on it there (they go through APNs, or
/// stay in the inbox).
final class GatewayConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private enum State {
        case authenticating
        case open(ConnectToken.Claims)
        case closing
        case closed
    }

    private let gateway: GatewayContext
    private let request: GatewayRequest
    private let connection: UInt64
    private var state = State.authenticating
    private var limit: MessageRateLimit
    private var lastHeard: UInt64
    private var heartbeat: RepeatedTask?
    private var context: ChannelHandlerContext?
    /// Whether any close was counted (the first one decides the reason).
    private var closeCounted = false

    init(gateway: GatewayContext, request: GatewayRequest, connection: UInt64) {
        self.gateway = gateway
        self.request = request
        self.connection = connection
        let now = NIODeadline.now().uptimeNanoseconds
        self.limit = MessageRateLimit(perSecond: gateway.settings.messagesPerSecond, burst: gateway.settings.messageBurst, now: now)
        self.lastHeard = now
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        guard gateway.apps.contains(request.app) else { return close(.unknownApp) }
        guard let text = request.token else { return close(.unauthorized) }
        let claims: ConnectToken.Claims
        do {
            claims = try gateway.tokens.verify(text, app: request.app, now: gateway.now())
        } catch {
            return close(.refusal(error))
        }
        state = .open(claims)
        if let previous = gateway.connections.register(
            app: claims.app, device: claims.device, connection: connection, channel: context.channel)
        {
            previous.pipeline.fireUserInboundEventTriggered(GatewayCloseEvent(close: .replaced))
        }
        // The inbox is replayed once the claim is written: a send stage keeps an online-only
        // message in the inbox before it reads the presence, so a message sent while this
        // connection opens is either routed to it or found in the inbox by the replay.
        let (replay, connection, channel) = (gateway.replay, self.connection, context.channel)
        gateway.presence.enqueue(PresenceChange(.claim, app: claims.app, token: claims.device, record: record)) {
            replay.start(app: claims.app, device: claims.device, connection: connection, channel: channel)
        }
        GatewayMetrics.opened(app: claims.app)
        GatewayMetrics.connections.record(gateway.connections.count)
        send(.text, GatewayMessages.welcome(gateway: gateway.id, connection: connection, schedule: gateway.schedule))
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        heartbeat = context.eventLoop.scheduleRepeatedTask(
            initialDelay: TimeAmount(gateway.schedule.firstPing(connection: connection)),
            delay: TimeAmount(gateway.schedule.pingInterval)
        ) { _ in handler.value.beat() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        end()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        end()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch state {
        case .authenticating, .closed:
            return
        case .closing:
            // The client's answer to our close frame: the closing handshake is done.
            if frame.opcode == .connectionClose { context.close(promise: nil) }
            return
        case .open:
            break
        }
        let now = NIODeadline.now().uptimeNanoseconds
        lastHeard = now
        if frame.opcode == .text, frame.fin {
            return read(text: Array(frame.unmaskedData.readableBytesView), now: now)
        }
        if frame.opcode == .connectionClose {
            // The client closes: answer with its code, then end the connection.
            var data = frame.unmaskedData
            let code = data.readInteger(as: UInt16.self) ?? 1000
            countClose(GatewayClose(code: code, reason: ""))
            release()
            state = .closing
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(closeFrame(code: code, reason: "", context: context)))
                .whenComplete { _ in channel.close(promise: nil) }
            return
        }
        guard limit.admit(now: now) else { return close(.rateLimited) }
        guard frame.fin, frame.opcode != .continuation else { return close(.fragmented) }
        switch frame.opcode {
        case .ping:
            send(.pong, Array(frame.unmaskedData.readableBytesView))
        case .pong:
            refreshPresence()
        case .binary:
            close(.binaryFrame)
        default:
            close(.protocolError)
        }
    }

    /// A whole text frame: an ack, or a message the gateway does not know.
    private func read(text: [UInt8], now: UInt64) {
        let message: GatewayMessages.ClientMessage
        switch GatewayMessages.parse(text) {
        case .failure(let close):
            guard limit.admit(now: now) else { return self.close(.rateLimited) }
            return self.close(close)
        case .success(let parsed):
            message = parsed
        }
        if case .ack(let id) = message, let latency = gateway.acks.acknowledge(connection: connection, id: id) {
            GatewayMetrics.acknowledged(after: latency)
            return
        }
        guard limit.admit(now: now) else { return close(.rateLimited) }
        switch message {
        case .ack:
            GatewayMetrics.lateAcks.increment()
        case .ackWithoutID:
            send(.text, GatewayMessages.error("an ack needs the string 'id' of the push it acknowledges"))
        case .unknown(let type):
            send(.text, GatewayMessages.error("unknown message type '\(type.prefix(64))'"))
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? GatewayCloseEvent {
            close(event.close)
        } else if let event = event as? GatewayPushEvent {
            guard case .open = state else {
                // Ended (or ending) after the send was expected: it is lost, not left to time out.
                return gateway.acks.connectionEnded(connection)
            }
            send(.text, event.frame)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // The frame decoder's refusals: the connection cannot be read further.
        switch error as? NIOWebSocketError {
        case .invalidFrameLength:
            close(.frameTooLarge(limit: gateway.settings.maxFrameBytes))
        case .some:
            close(.protocolError)
        case .none:
            context.close(promise: nil)
        }
    }

    /// A heartbeat: closes an idle connection, pings a live one.
    private func beat() {
        guard case .open = state else { return }
        if gateway.schedule.isIdle(lastHeard: lastHeard, now: NIODeadline.now().uptimeNanoseconds) {
            return close(.idle)
        }
        send(.ping, [])
    }

    private func refreshPresence() {
        guard case .open(let claims) = state else { return }
        gateway.presence.enqueue(PresenceChange(.refresh, app: claims.app, token: claims.device, record: record))
    }

    private var record: PresenceRecord {
        PresenceRecord(gateway: gateway.id, connection: connection)
    }

    private func send(_ opcode: WebSocketOpcode, _ bytes: [UInt8]) {
        guard let context else { return }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: opcode, data: buffer)), promise: nil)
    }

    /// Sends a close frame naming `close`, then waits for the client's (RFC 6455 §7.1.1: the
    /// server closes the TCP connection once the closing handshake is done; closing it with the
    /// client's frames still unread would reset it, and the client would lose our reason), at
    /// most ``closingHandshakeDeadline``: a client that never answers does not hold it.
    private func close(_ close: GatewayClose) {
        switch state {
        case .closing, .closed: return
        case .authenticating, .open: break
        }
        if case .open = state { release() }
        state = .closing
        countClose(close)
        guard let context else { return }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(closeFrame(code: close.code, reason: close.reason, context: context)), promise: nil)
        context.eventLoop.scheduleTask(in: Self.closingHandshakeDeadline) { channel.close(promise: nil) }
    }

    /// A close frame: the code, then the reason (a close frame's payload is at most 125 bytes).
    private func closeFrame(code: UInt16, reason: String, context: ChannelHandlerContext) -> WebSocketFrame {
        var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.writeInteger(code)
        data.writeBytes(reason.utf8.prefix(123))
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
    }

    /// How long a closing connection waits for the client's close frame.
    static let closingHandshakeDeadline = TimeAmount.seconds(2)

    /// The connection is gone (or going): its heartbeat stops, its presence goes.
    private func end() {
        if case .open = state {
            release()
            countClose(.dropped)
        }
        state = .closed
    }

    private func release() {
        heartbeat?.cancel()
        heartbeat = nil
        guard case .open(let claims) = state else { return }
        gateway.acks.connectionEnded(connection)
        if gateway.connections.unregister(app: claims.app, device: claims.device, connection: connection) {
            gateway.presence.enqueue(PresenceChange(.release, app: claims.app, token: claims.device, record: record))
        }
        GatewayMetrics.connections.record(gateway.connections.count)
    }

    private func countClose(_ close: GatewayClose) {
        guard !closeCounted else { return }
        closeCounted = true
        GatewayMetrics.closed(close)
    }
}
