import Foundation
import HTTP2Frames
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOTLS

/// Runs one APNs connection: speaks HTTP/2 (RFC 9113) over the TLS stream itself, opens a stream
/// per request (HEADERS + DATA), collects the answers, follows the server's SETTINGS, GOAWAY and
/// PING, and reports to the pool.
///
/// A client of APNs uses a small part of HTTP/2: it opens streams and never accepts any, sends
/// a header block and a payload of at most a few KiB per stream, and reads a status, an
/// `apns-id` and sometimes a short JSON body back. NIO's general-purpose HTTP/2 handler (a state
/// machine per stream, flow-control buffers, a frame object and a pipeline event per frame,
/// Huffman coding) cost more CPU than everything else in a request, so this handler reads and
/// writes frames directly:
/// - request header blocks come from ``HPACKRequestEncoder`` (indexed repeats, raw literals),
///   answers are decoded by NIOHPACK's decoder;
/// - every frame of a tick goes into one buffer, written and flushed once, so a burst of
///   requests becomes one TLS write;
/// - the send windows of RFC 9113 §6.9 are followed (DATA waits for WINDOW_UPDATE), the
///   connection's receive window is kept at 1 MiB, and requests beyond the server's
///   SETTINGS_MAX_CONCURRENT_STREAMS wait here for a stream to end.
final class APNsConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = Never
    typealias OutboundOut = ByteBuffer

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

    /// TLS did not agree on HTTP/2.
    struct NotHTTP2: Error, CustomStringConvertible {
        var negotiatedProtocol: String?
        var description: String { "the server did not negotiate h2 over ALPN (got \(negotiatedProtocol ?? "nothing"))" }
    }

    /// One request on the wire.
    private struct Stream {
        var promise: EventLoopPromise<APNsStreamOutcome>
        var deadline: NIODeadline
        /// What the server still lets this stream send.
        var sendWindow: Int
        /// DATA bytes received on the stream, against the window we advertised.
        var received = 0
        var status: Int?
        var apnsID: String?
        var body: ByteBuffer?
    }

    /// A request waiting for the server's stream limit to let it open.
    private struct Queued {
        var headers: HPACKHeaders
        var payload: ByteBuffer
        var deadline: NIODeadline
        var promise: EventLoopPromise<APNsStreamOutcome>
    }

    /// A header block arriving in HEADERS + CONTINUATION frames.
    private struct PartialHeaderBlock {
        var streamID: UInt32
        var endStream: Bool
        var block: ByteBuffer
    }

    /// HTTP/2's default when the server does not say: unlimited, capped by the pool.
    private static let unlimitedStreams = Int(Int32.max)
    /// The receive window of the connection and of every stream: ample for error bodies.
    static let receiveWindow = 1 << 20
    /// A header block larger than this (HEADERS + CONTINUATION) ends the connection.
    private static let maxHeaderBlockSize = 64 * 1024
    private static let connectionPreface = ByteBuffer(string: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")

    private let events: Events
    private let pingInterval: TimeAmount?
    private let pingTimeout: TimeAmount
    private var context: ChannelHandlerContext?

    private var streams: [UInt32: Stream] = [:]
    private var queued: [Queued] = []
    /// DATA that waits for a send window, in the order it was sent.
    private var blockedData: [(streamID: UInt32, bytes: ByteBuffer)] = []
    private var nextStreamID: UInt32 = 1
    private var goAwayLastStreamID: UInt32?
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS; `nil` until its first SETTINGS.
    private var maxStreams: Int?
    private var peerInitialWindowSize = HTTP2WireFrame.defaultWindowSize
    private var peerMaxFrameSize = HTTP2WireFrame.defaultMaxFrameSize
    private var connectionSendWindow = HTTP2WireFrame.defaultWindowSize
    private var connectionReceiveWindow = HTTP2WireFrame.defaultWindowSize
    private var partialHeaderBlock: PartialHeaderBlock?

    private var reader = HTTP2FrameReader()
    private var encoder = HPACKRequestEncoder()
    private var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
    /// Frames written since the last flush.
    private var outbound = ByteBuffer()
    private let flushes = FlushCoalescer()
    private var prefaceSent = false

    private var keepalive: RepeatedTask?
    private var timeoutSweep: RepeatedTask?
    private var pingDeadline: Scheduled<Void>?
    /// Closing (an unanswered PING, a protocol error, GOAWAY with nothing left in flight).
    private var isClosing = false

    init(events: Events, pingInterval: TimeAmount?, pingTimeout: TimeAmount) {
        self.events = events
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        outbound = context.channel.allocator.buffer(capacity: 4096)
        if context.channel.isActive { sendPreface(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        sendPreface(context: context)
        context.fireChannelActive()
    }

    // MARK: Requests

    /// Sends a request on a new stream; `promise` gets the outcome.
    func send(headers: HPACKHeaders, payload: ByteBuffer, timeout: TimeAmount, promise: EventLoopPromise<APNsStreamOutcome>) {
        guard let context, context.channel.isActive, !isClosing, goAwayLastStreamID == nil,
            nextStreamID < HTTP2WireFrame.maxStreamID
        else {
            promise.succeed(.refused)
            return
        }
        guard timeout > .zero else {
            promise.succeed(.timedOut)
            return
        }
        let request = Queued(headers: headers, payload: payload, deadline: context.eventLoop.now + timeout, promise: promise)
        startTimeoutSweep(context: context)
        if let maxStreams, streams.count >= maxStreams {
            queued.append(request)
            return
        }
        open(request, context: context)
    }

    private func open(_ request: Queued, context: ChannelHandlerContext) {
        let streamID = nextStreamID
        nextStreamID += 2
        streams[streamID] = Stream(promise: request.promise, deadline: request.deadline, sendWindow: peerInitialWindowSize)
        writeHeaders(request.headers, streamID: streamID)
        if !blockedData.isEmpty {
            blockedData.append((streamID, request.payload))  // after what already waits, in order
        } else if let rest = writeData(request.payload, streamID: streamID) {
            blockedData.append((streamID, rest))
        }
        flushSoon(context)
    }

    /// Opens queued requests while the server's stream limit allows.
    private func openQueued(context: ChannelHandlerContext) {
        guard !queued.isEmpty else { return }
        if isClosing || goAwayLastStreamID != nil || nextStreamID >= HTTP2WireFrame.maxStreamID {
            let refused = queued
            queued.removeAll()
            for request in refused { request.promise.succeed(.refused) }
            return
        }
        var opened = 0
        while opened < queued.count, streams.count < maxStreams ?? Self.unlimitedStreams {
            open(queued[opened], context: context)
            opened += 1
        }
        queued.removeFirst(opened)
    }

    /// One HEADERS frame, with CONTINUATION frames when the block exceeds the server's frame size.
    private func writeHeaders(_ headers: HPACKHeaders, streamID: UInt32) {
        let frameStart = outbound.writerIndex
        outbound.writeRepeatingByte(0, count: HTTP2WireFrame.headerSize)
        encoder.encode(headers, into: &outbound)
        let blockLength = outbound.writerIndex - frameStart - HTTP2WireFrame.headerSize
        if blockLength <= peerMaxFrameSize {
            outbound.setHTTP2FrameHeader(at: frameStart, length: blockLength, type: .headers, flags: .endHeaders, streamID: streamID)
            return
        }
        var block = outbound.getSlice(at: frameStart + HTTP2WireFrame.headerSize, length: blockLength)!
        outbound.moveWriterIndex(to: frameStart)
        var type = HTTP2WireFrame.Kind.headers
        while block.readableBytes > 0 {
            let piece = block.readSlice(length: min(block.readableBytes, peerMaxFrameSize))!
            outbound.writeHTTP2Frame(
                type: type, flags: block.readableBytes == 0 ? .endHeaders : [], streamID: streamID, payload: piece)
            type = .continuation
        }
    }

    /// Writes as much of `payload` as the windows allow, the last frame with END_STREAM; returns
    /// what is left to send.
    private func writeData(_ payload: ByteBuffer, streamID: UInt32) -> ByteBuffer? {
        guard var stream = streams[streamID] else { return nil }
        var payload = payload
        defer { streams[streamID] = stream }
        repeat {
            // A window may be negative after the server lowered SETTINGS_INITIAL_WINDOW_SIZE.
            let length = max(0, min(payload.readableBytes, connectionSendWindow, stream.sendWindow, peerMaxFrameSize))
            if length == 0, payload.readableBytes > 0 { return payload }
            let piece = payload.readSlice(length: length)!
            outbound.writeHTTP2Frame(
                type: .data, flags: payload.readableBytes == 0 ? .endStream : [], streamID: streamID, payload: piece)
            connectionSendWindow -= length
            stream.sendWindow -= length
        } while payload.readableBytes > 0
        return nil
    }

    /// Sends DATA that waited for a window, in order.
    private func writeBlockedData(context: ChannelHandlerContext) {
        guard !blockedData.isEmpty else { return }
        let waiting = blockedData
        blockedData.removeAll()
        for (streamID, bytes) in waiting where streams[streamID] != nil {
            if let rest = writeData(bytes, streamID: streamID) {
                blockedData.append((streamID, rest))
            }
        }
        flushSoon(context)
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        reader.append(unwrapInboundIn(data))
        do {
            while !isClosing, let frame = try reader.next() {
                try process(frame, context: context)
            }
        } catch {
            connectionError(error, context: context)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        writeOutbound(context: context)
        context.fireChannelReadComplete()
    }

    private func process(_ frame: HTTP2WireFrame, context: ChannelHandlerContext) throws(HTTP2ConnectionError) {
        if partialHeaderBlock != nil, frame.kind != .continuation {
            throw HTTP2ConnectionError(code: .protocolError, message: "a header block was interrupted")
        }
        switch frame.kind {
        case .data:
            try receivedData(frame)
        case .headers:
            guard frame.streamID != 0 else { throw HTTP2ConnectionError(code: .protocolError, message: "HEADERS on stream 0") }
            var block = try Self.unpadded(frame)
            if frame.flags.contains(.priority) {
                guard block.readableBytes >= 5 else { throw HTTP2ConnectionError(code: .frameSizeError, message: "short HEADERS") }
                block.moveReaderIndex(forwardBy: 5)
            }
            let endStream = frame.flags.contains(.endStream)
            if frame.flags.contains(.endHeaders) {
                try receivedHeaderBlock(&block, streamID: frame.streamID, endStream: endStream)
            } else {
                partialHeaderBlock = PartialHeaderBlock(streamID: frame.streamID, endStream: endStream, block: block)
            }
        case .continuation:
            guard var partial = partialHeaderBlock, partial.streamID == frame.streamID else {
                throw HTTP2ConnectionError(code: .protocolError, message: "CONTINUATION without a header block")
            }
            partialHeaderBlock = nil
            partial.block.writeImmutableBuffer(frame.payload)
            guard partial.block.readableBytes <= Self.maxHeaderBlockSize else {
                throw HTTP2ConnectionError(code: .protocolError, message: "a header block over \(Self.maxHeaderBlockSize) bytes")
            }
            if frame.flags.contains(.endHeaders) {
                try receivedHeaderBlock(&partial.block, streamID: partial.streamID, endStream: partial.endStream)
            } else {
                partialHeaderBlock = partial
            }
        case .rstStream:
            guard frame.streamID != 0, frame.payload.readableBytes == 4 else {
                throw HTTP2ConnectionError(code: .protocolError, message: "malformed RST_STREAM")
            }
            let code = frame.payload.getInteger(at: frame.payload.readerIndex, as: UInt32.self)!
            complete(
                frame.streamID,
                code == HTTP2WireErrorCode.refusedStream.rawValue
                    ? .refused : .connectionLost(HTTP2StreamReset(streamID: frame.streamID, errorCode: code)))
        case .settings:
            try receivedSettings(frame, context: context)
        case .pushPromise:
            throw HTTP2ConnectionError(code: .protocolError, message: "PUSH_PROMISE with push disabled")
        case .ping:
            guard frame.streamID == 0, frame.payload.readableBytes == 8 else {
                throw HTTP2ConnectionError(code: .frameSizeError, message: "malformed PING")
            }
            if frame.flags.contains(.ack) {
                pingDeadline?.cancel()
                pingDeadline = nil
            } else {
                outbound.writeHTTP2Frame(type: .ping, flags: .ack, streamID: 0, payload: frame.payload)
            }
        case .goAway:
            guard frame.streamID == 0, frame.payload.readableBytes >= 8 else {
                throw HTTP2ConnectionError(code: .frameSizeError, message: "malformed GOAWAY")
            }
            var payload = frame.payload
            let lastStreamID = payload.readInteger(as: UInt32.self)! & HTTP2WireFrame.maxStreamID
            let code = payload.readInteger(as: UInt32.self)!
            receivedGoAway(lastStreamID: lastStreamID, code: code, debugData: payload, context: context)
        case .windowUpdate:
            guard frame.payload.readableBytes == 4 else { throw HTTP2ConnectionError(code: .frameSizeError, message: "malformed WINDOW_UPDATE") }
            let increment = Int(frame.payload.getInteger(at: frame.payload.readerIndex, as: UInt32.self)! & 0x7fff_ffff)
            try receivedWindowUpdate(increment, streamID: frame.streamID, context: context)
        case .priority, .none:
            break  // PRIORITY is advisory; frames of unknown types are ignored (RFC 9113 §4.1)
        }
    }

    /// The payload without its padding (RFC 9113 §6.1, §6.2).
    private static func unpadded(_ frame: HTTP2WireFrame) throws(HTTP2ConnectionError) -> ByteBuffer {
        guard frame.flags.contains(.padded) else { return frame.payload }
        var payload = frame.payload
        guard let padding = payload.readInteger(as: UInt8.self), Int(padding) <= payload.readableBytes else {
            throw HTTP2ConnectionError(code: .protocolError, message: "padding longer than the frame")
        }
        return payload.readSlice(length: payload.readableBytes - Int(padding))!
    }

    private func receivedData(_ frame: HTTP2WireFrame) throws(HTTP2ConnectionError) {
        guard frame.streamID != 0 else { throw HTTP2ConnectionError(code: .protocolError, message: "DATA on stream 0") }
        let length = frame.payload.readableBytes
        connectionReceiveWindow -= length
        guard connectionReceiveWindow >= 0 else {
            throw HTTP2ConnectionError(code: .flowControlError, message: "DATA beyond the connection window")
        }
        if connectionReceiveWindow <= Self.receiveWindow / 2 {
            writeWindowUpdate(streamID: 0, increment: Self.receiveWindow - connectionReceiveWindow)
            connectionReceiveWindow = Self.receiveWindow
        }
        let data = try Self.unpadded(frame)
        // A stream that timed out or was reset may still receive what was on its way.
        guard var stream = streams[frame.streamID] else { return }
        stream.received += length
        guard stream.received <= Self.receiveWindow else {
            throw HTTP2ConnectionError(code: .flowControlError, message: "DATA beyond stream \(frame.streamID)'s window")
        }
        if data.readableBytes > 0 { stream.body.appendFrameBytes(data) }
        streams[frame.streamID] = stream
        if frame.flags.contains(.endStream) { finish(frame.streamID) }
    }

    private func receivedHeaderBlock(_ block: inout ByteBuffer, streamID: UInt32, endStream: Bool) throws(HTTP2ConnectionError) {
        // Every block is decoded, even a late one: the decoder's table must follow the server's.
        let headers: HPACKHeaders
        do {
            headers = try decoder.decodeHeaders(from: &block)
        } catch {
            throw HTTP2ConnectionError(code: .compressionError, message: "\(error)")
        }
        guard var stream = streams[streamID] else { return }
        if stream.status == nil, let raw = headers.first(name: ":status"), let status = Int(raw), status >= 200 {
            stream.status = status
            stream.apnsID = headers.first(name: "apns-id")
            streams[streamID] = stream
        }
        if endStream { finish(streamID) }
    }

    private func receivedSettings(_ frame: HTTP2WireFrame, context: ChannelHandlerContext) throws(HTTP2ConnectionError) {
        guard frame.streamID == 0 else { throw HTTP2ConnectionError(code: .protocolError, message: "SETTINGS on a stream") }
        if frame.flags.contains(.ack) { return }
        guard frame.payload.readableBytes % 6 == 0 else { throw HTTP2ConnectionError(code: .frameSizeError, message: "malformed SETTINGS") }
        var payload = frame.payload
        var advertisedMaxStreams: Int?
        while let id = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) {
            switch HTTP2SettingID(rawValue: id) {
            case .headerTableSize:
                encoder.peerTableSizeChanged(Int(value))
            case .maxConcurrentStreams:
                advertisedMaxStreams = Int(value)
            case .initialWindowSize:
                guard value <= HTTP2WireFrame.maxStreamID else {
                    throw HTTP2ConnectionError(code: .flowControlError, message: "SETTINGS_INITIAL_WINDOW_SIZE \(value)")
                }
                let delta = Int(value) - peerInitialWindowSize
                peerInitialWindowSize = Int(value)
                for streamID in streams.keys { streams[streamID]!.sendWindow += delta }
            case .maxFrameSize:
                guard value >= HTTP2WireFrame.defaultMaxFrameSize, value <= 0xff_ffff else {
                    throw HTTP2ConnectionError(code: .protocolError, message: "SETTINGS_MAX_FRAME_SIZE \(value)")
                }
                peerMaxFrameSize = Int(value)
            case .enablePush, .maxHeaderListSize, .none:
                break
            }
        }
        outbound.writeHTTP2FrameHeader(length: 0, type: .settings, flags: .ack, streamID: 0)
        if let current = maxStreams {
            if let advertisedMaxStreams, advertisedMaxStreams != current {
                maxStreams = advertisedMaxStreams
                events.maxStreamsChanged(advertisedMaxStreams)
            }
        } else {
            let first = advertisedMaxStreams ?? Self.unlimitedStreams
            maxStreams = first
            events.ready(first)
            startKeepalive(context: context)
        }
        openQueued(context: context)
        writeBlockedData(context: context)
        flushSoon(context)
    }

    private func receivedWindowUpdate(_ increment: Int, streamID: UInt32, context: ChannelHandlerContext) throws(HTTP2ConnectionError) {
        if streamID == 0 {
            guard increment > 0 else { throw HTTP2ConnectionError(code: .protocolError, message: "WINDOW_UPDATE of 0") }
            connectionSendWindow += increment
            guard connectionSendWindow <= Int(HTTP2WireFrame.maxStreamID) else {
                throw HTTP2ConnectionError(code: .flowControlError, message: "connection window over 2^31 - 1")
            }
        } else {
            guard streams[streamID] != nil else { return }
            streams[streamID]!.sendWindow += increment
        }
        writeBlockedData(context: context)
    }

    private func receivedGoAway(lastStreamID: UInt32, code: UInt32, debugData: ByteBuffer, context: ChannelHandlerContext) {
        goAwayLastStreamID = min(goAwayLastStreamID ?? HTTP2WireFrame.maxStreamID, lastStreamID)
        // The pool retires this connection first, so the refused requests go to another one.
        events.goingAway(HTTP2ErrorCode(networkCode: Int(code)), Self.reason(inDebugData: debugData))
        // Streams above the last one were never processed: safe to send elsewhere.
        for streamID in streams.keys where streamID > lastStreamID {
            complete(streamID, .refused)
        }
        openQueued(context: context)
        closeIfDrained(context: context)
    }

    // MARK: Outcomes

    private func finish(_ streamID: UInt32) {
        guard let stream = streams[streamID] else { return }
        guard let status = stream.status else {
            complete(streamID, .connectionLost(HTTP2StreamReset(streamID: streamID, errorCode: HTTP2WireErrorCode.protocolError.rawValue)))
            return
        }
        complete(streamID, .response(status: status, apnsID: stream.apnsID, body: stream.body))
    }

    private func complete(_ streamID: UInt32, _ outcome: APNsStreamOutcome) {
        guard let stream = streams.removeValue(forKey: streamID) else { return }
        stream.promise.succeed(outcome)
        guard let context else { return }
        openQueued(context: context)
        closeIfDrained(context: context)
    }

    /// After GOAWAY the connection closes once its last stream has its answer.
    private func closeIfDrained(context: ChannelHandlerContext) {
        guard goAwayLastStreamID != nil, streams.isEmpty, queued.isEmpty, !isClosing else { return }
        isClosing = true
        writeOutbound(context: context)
        context.close(promise: nil)
    }

    /// The peer broke the protocol, or the connection failed below HTTP/2: tell the peer (GOAWAY),
    /// fail what is in flight (the server may have it) and close.
    private func connectionError(_ error: any Error, context: ChannelHandlerContext) {
        guard !isClosing else { return }
        isClosing = true
        if let protocolError = error as? HTTP2ConnectionError {
            var payload = ByteBuffer()
            payload.writeInteger(UInt32(0))
            payload.writeInteger(protocolError.code.rawValue)
            outbound.writeHTTP2Frame(type: .goAway, streamID: 0, payload: payload)
            writeOutbound(context: context)
        }
        failInFlight(error)
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted(let negotiatedProtocol) = event, negotiatedProtocol != "h2" {
            connectionError(NotHTTP2(negotiatedProtocol: negotiatedProtocol), context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        connectionError(error, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        keepalive?.cancel()
        timeoutSweep?.cancel()
        timeoutSweep = nil
        pingDeadline?.cancel()
        isClosing = true
        failInFlight(ChannelError.eof)
        events.closed()
        context.fireChannelInactive()
    }

    /// Answers every request in flight with a lost connection (the server may have it), and every
    /// queued one as refused (it never left).
    private func failInFlight(_ error: any Error) {
        let waiting = queued
        queued.removeAll()
        blockedData.removeAll()
        for request in waiting { request.promise.succeed(.refused) }
        for streamID in Array(streams.keys) {
            complete(streamID, .connectionLost(error))
        }
    }

    // MARK: Writing

    private func sendPreface(context: ChannelHandlerContext) {
        guard !prefaceSent else { return }
        prefaceSent = true
        outbound.writeImmutableBuffer(Self.connectionPreface)
        let settings: [(HTTP2SettingID, UInt32)] = [
            (.maxConcurrentStreams, 0),
            (.initialWindowSize, UInt32(Self.receiveWindow)),
            (.enablePush, 0),
        ]
        outbound.writeHTTP2FrameHeader(length: settings.count * 6, type: .settings, flags: [], streamID: 0)
        for (id, value) in settings {
            outbound.writeInteger(id.rawValue)
            outbound.writeInteger(value)
        }
        writeWindowUpdate(streamID: 0, increment: Self.receiveWindow - connectionReceiveWindow)
        connectionReceiveWindow = Self.receiveWindow
        writeOutbound(context: context)
    }

    private func writeWindowUpdate(streamID: UInt32, increment: Int) {
        outbound.writeHTTP2FrameHeader(length: 4, type: .windowUpdate, flags: [], streamID: streamID)
        outbound.writeInteger(UInt32(increment))
    }

    /// Writes and flushes what this tick produced, after the tasks already queued on the loop
    /// (typically the rest of the same burst of requests) have added their frames.
    private func flushSoon(_ context: ChannelHandlerContext) {
        flushes.schedule(on: context.eventLoop) { self.writeOutbound(context: context) }
    }

    private func writeOutbound(context: ChannelHandlerContext) {
        guard outbound.readableBytes > 0 else { return }
        let bytes = outbound
        outbound = context.channel.allocator.buffer(capacity: max(4096, bytes.readableBytes))
        context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
    }

    // MARK: Timers

    /// Checks the deadlines every ``timeoutSweepInterval`` while any request is in flight or
    /// queued. A timer per request cost a tenth of the client's CPU (NIO cancels a timer by
    /// searching its queue); a request times out up to one interval late.
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

    /// Answers the requests past their deadline with a timeout and resets their streams; stops
    /// sweeping when nothing is in flight.
    private func sweepTimeouts(context: ChannelHandlerContext) {
        let now = context.eventLoop.now
        if queued.contains(where: { $0.deadline <= now }) {
            let expired = queued.filter { $0.deadline <= now }
            queued.removeAll { $0.deadline <= now }
            for request in expired { request.promise.succeed(.timedOut) }
        }
        var expired: [UInt32] = []
        for (streamID, stream) in streams where stream.deadline <= now {
            expired.append(streamID)
        }
        for streamID in expired {
            var payload = ByteBuffer()
            payload.writeInteger(HTTP2WireErrorCode.cancel.rawValue)
            outbound.writeHTTP2Frame(type: .rstStream, streamID: streamID, payload: payload)
            complete(streamID, .timedOut)
        }
        if !expired.isEmpty {
            flushSoon(context)
            // A request that got no answer in time makes the connection prove it is alive: a
            // peer gone silent (a dead network path) fails the PING and the connection is
            // replaced now, not at the next keepalive, which may be a minute away.
            sendPing(context: context)
        }
        if streams.isEmpty, queued.isEmpty {
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

    /// Sends a PING unless one is outstanding; closes the connection when it stays unanswered.
    private func sendPing(context: ChannelHandlerContext) {
        guard pingDeadline == nil, !isClosing else { return }
        pingDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: pingTimeout) {
            self.keepaliveFailed(context: context)
        }
        var payload = ByteBuffer()
        payload.writeInteger(UInt64(0))
        outbound.writeHTTP2Frame(type: .ping, streamID: 0, payload: payload)
        writeOutbound(context: context)
    }
}
