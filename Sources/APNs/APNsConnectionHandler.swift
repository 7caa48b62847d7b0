import Foundation
import HTTP2Frames
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Runs one APNs connection at the frame level: opens a stream per request (HEADERS + DATA),
/// collects the answers, follows the server's SETTINGS, GOAWAY and PING, and reports to the pool.
///
/// NIO's HTTP/2 handler runs without a stream multiplexer here: a child `Channel` per request
/// costs more than the request itself, and APNs streams are one request and one answer. Flushes
/// are coalesced to one per event loop tick, so a burst of requests becomes one TLS write.
final class APNsConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = Never
    typealias OutboundOut = HTTP2Frame

    /// What the pool hears about its connection. Called on the connection's event loop.
    struct Events: Sendable {
        var ready: @Sendable (_ maxStreams: Int) -> Void
        var maxStreamsChanged: @Sendable (_ maxStreams: Int) -> Void
        /// GOAWAY arrived: its error code and APNs's reason (the JSON `reason` of the debug
        /// data, such as `IdleTimeout` or `Shutdown`), when it gave one.
        var goingAway: @Sendable (_ errorCode: HTTP2ErrorCode, _ reason: String?) -> Void
        /// A PING went unanswered: the connection takes no new streams and is being closed.
        var unresponsive: @Sendable () -> Void
        var closed: @Sendable () -> Void
    }

    /// Why in-flight requests failed when a PING went unanswered.
    struct KeepaliveTimeout: Error, CustomStringConvertible {
        var description: String { "the connection did not acknowledge a PING in time" }
    }

    /// One request in flight.
    private struct Stream {
        var promise: EventLoopPromise<APNsStreamOutcome>
        var deadline: NIODeadline
        var status: Int?
        var apnsID: String?
        var body: ByteBuffer?
    }

    /// HTTP/2's default when the server does not say: unlimited, capped by the pool.
    private static let unlimitedStreams = Int(Int32.max)

    private let events: Events
    private let pingInterval: TimeAmount?
    private let pingTimeout: TimeAmount
    private var context: ChannelHandlerContext?
    private var streams: [HTTP2StreamID: Stream] = [:]
    private var nextStreamID = HTTP2StreamID(1)
    private var goAwayLastStreamID: HTTP2StreamID?
    private var maxStreams: Int?
    private let flushes = FlushCoalescer()
    private var keepalive: RepeatedTask?
    private var timeoutSweep: RepeatedTask?
    private var pingDeadline: Scheduled<Void>?
    /// Closing after an unanswered PING; the TLS shutdown may take a while on a silent peer.
    private var isClosing = false

    init(events: Events, pingInterval: TimeAmount?, pingTimeout: TimeAmount) {
        self.events = events
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Sends a request on a new stream; `promise` gets the outcome.
    func send(headers: HPACKHeaders, payload: ByteBuffer, timeout: TimeAmount, promise: EventLoopPromise<APNsStreamOutcome>) {
        guard let context, context.channel.isActive, !isClosing, goAwayLastStreamID == nil,
            nextStreamID < HTTP2StreamID.maxID
        else {
            promise.succeed(.refused)
            return
        }
        guard timeout > .zero else {
            promise.succeed(.timedOut)
            return
        }
        let streamID = nextStreamID
        nextStreamID = HTTP2StreamID(Int32(streamID) + 2)
        streams[streamID] = Stream(promise: promise, deadline: .now() + timeout)
        startTimeoutSweep(context: context)
        context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers)))), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.write(
            wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(payload), endStream: true)))),
            promise: written)
        written.futureResult.assumeIsolated().whenFailure { error in
            self.complete(streamID, self.isRefusal(error, streamID: streamID) ? .refused : .connectionLost(error))
        }
        flushes.flushSoon(context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            guard var stream = streams[frame.streamID] else { return }
            if stream.status == nil, let raw = headers.headers.first(name: ":status"), let status = Int(raw) {
                stream.status = status
                stream.apnsID = headers.headers.first(name: "apns-id")
                streams[frame.streamID] = stream
            }
            if headers.endStream { finish(frame.streamID) }
        case .data(let data):
            guard var stream = streams[frame.streamID] else { return }
            if case .byteBuffer(let chunk) = data.data {
                stream.body.appendFrameBytes(chunk)
                streams[frame.streamID] = stream
            }
            if data.endStream { finish(frame.streamID) }
        case .rstStream(let code):
            complete(frame.streamID, code == .refusedStream ? .refused : .connectionLost(NIOHTTP2Errors.streamClosed(streamID: frame.streamID, errorCode: code)))
        case .settings(.settings(let settings)):
            receivedSettings(settings, context: context)
        case .goAway(let lastStreamID, let errorCode, let debugData):
            // NIO closes the streams above `lastStreamID` (StreamClosedEvent) after this frame.
            goAwayLastStreamID = min(goAwayLastStreamID ?? .maxID, lastStreamID)
            events.goingAway(errorCode, debugData.flatMap(Self.reason(inDebugData:)))
        case .ping(_, ack: true):
            pingDeadline?.cancel()
            pingDeadline = nil
        default:
            break
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent, streams[closed.streamID] != nil {
            let error = NIOHTTP2Errors.streamClosed(streamID: closed.streamID, errorCode: closed.reason ?? .noError)
            complete(closed.streamID, isRefusal(error, streamID: closed.streamID) ? .refused : .connectionLost(error))
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let streamError = error as? NIOHTTP2Errors.StreamError {
            complete(streamError.streamID, isRefusal(streamError.baseError, streamID: streamError.streamID) ? .refused : .connectionLost(error))
            return
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        keepalive?.cancel()
        timeoutSweep?.cancel()
        timeoutSweep = nil
        pingDeadline?.cancel()
        failInFlight(ChannelError.eof)
        events.closed()
        context.fireChannelInactive()
    }

    private func receivedSettings(_ settings: HTTP2Settings, context: ChannelHandlerContext) {
        let advertised = settings.last { $0.parameter == .maxConcurrentStreams }?.value
        if let current = maxStreams {
            if let advertised, advertised != current {
                maxStreams = advertised
                events.maxStreamsChanged(advertised)
            }
        } else {
            maxStreams = advertised ?? Self.unlimitedStreams
            events.ready(maxStreams!)
            startKeepalive(context: context)
        }
    }

    private func finish(_ streamID: HTTP2StreamID) {
        guard let stream = streams[streamID] else { return }
        guard let status = stream.status else {
            complete(streamID, .connectionLost(NIOHTTP2Errors.streamClosed(streamID: streamID, errorCode: .protocolError)))
            return
        }
        complete(streamID, .response(status: status, apnsID: stream.apnsID, body: stream.body))
    }

    private func complete(_ streamID: HTTP2StreamID, _ outcome: APNsStreamOutcome) {
        guard let stream = streams.removeValue(forKey: streamID) else { return }
        stream.promise.succeed(outcome)
    }

    /// Checks the streams' deadlines every ``timeoutSweepInterval`` while any is in flight. A
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

    /// Answers the streams past their deadline with a timeout and resets them; stops sweeping
    /// when nothing is in flight.
    private func sweepTimeouts(context: ChannelHandlerContext) {
        let now = NIODeadline.now()
        var expired: [HTTP2StreamID] = []
        for (streamID, stream) in streams where stream.deadline <= now {
            expired.append(streamID)
        }
        for streamID in expired {
            complete(streamID, .timedOut)
            context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .rstStream(.cancel))), promise: nil)
        }
        if !expired.isEmpty { flushes.flushSoon(context) }
        if streams.isEmpty {
            timeoutSweep?.cancel()
            timeoutSweep = nil
        }
    }

    private struct GoAwayDebugData: Decodable {
        var reason: String
    }

    /// APNs puts `{"reason":"…"}` into a GOAWAY's debug data.
    static func reason(inDebugData data: ByteBuffer) -> String? {
        guard data.readableBytes > 0, data.readableBytes <= 1024 else { return nil }
        return try? JSONDecoder().decode(GoAwayDebugData.self, from: Data(data.readableBytesView)).reason
    }

    /// Errors that prove the server never processed the stream: REFUSED_STREAM, a stream opened
    /// after GOAWAY, or a stream above the GOAWAY's last stream id (NIO closes those itself).
    private func isRefusal(_ error: any Error, streamID: HTTP2StreamID) -> Bool {
        if error is NIOHTTP2Errors.CreatedStreamAfterGoaway { return true }
        if let closed = error as? NIOHTTP2Errors.StreamClosed, closed.errorCode == .refusedStream { return true }
        if let lastStreamID = goAwayLastStreamID, streamID > lastStreamID { return true }
        return false
    }

    private func startKeepalive(context: ChannelHandlerContext) {
        guard let pingInterval else { return }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        keepalive = context.eventLoop.scheduleRepeatedTask(initialDelay: pingInterval, delay: pingInterval) { _ in
            let (handler, context) = loopBound.value
            handler.sendPing(context: context)
        }
    }

    /// The peer went silent: fail what is in flight now (closing waits for a TLS shutdown the
    /// peer will not answer), take no new streams, and close.
    private func keepaliveFailed(context: ChannelHandlerContext) {
        guard !isClosing else { return }
        isClosing = true
        keepalive?.cancel()
        events.unresponsive()
        failInFlight(KeepaliveTimeout())
        context.close(promise: nil)
    }

    /// Answers every request in flight with a lost connection.
    private func failInFlight(_ error: any Error) {
        for streamID in Array(streams.keys) {
            complete(streamID, .connectionLost(error))
        }
    }

    /// Sends a PING unless one is outstanding; closes the connection when it stays unanswered.
    private func sendPing(context: ChannelHandlerContext) {
        guard pingDeadline == nil else { return }
        pingDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: pingTimeout) {
            self.keepaliveFailed(context: context)
        }
        let ping = HTTP2Frame(streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: 0), ack: false))
        context.writeAndFlush(wrapOutboundOut(ping), promise: nil)
    }
}
