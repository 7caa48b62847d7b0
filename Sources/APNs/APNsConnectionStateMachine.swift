import Foundation
import HTTP2Frames
import NIOCore
import NIOHPACK
import NIOHTTP2

/// The HTTP/2 state of one APNs connection (RFC 9113), without I/O: the streams in flight and
/// their windows, the server's SETTINGS, GOAWAY and PING, and the frames the client writes.
///
/// ``APNsConnectionHandler`` feeds it the bytes it reads, the requests it is given and the time,
/// carries its decisions out (answer a request, tell the pool, close, run the timers) and writes
/// what ``takeOutbound()`` returns. Every rule of the protocol lives here and is tested without a
/// channel (APNsConnectionStateMachineTests).
///
/// A client of APNs uses a small part of HTTP/2: it opens streams and never accepts any, sends
/// a header block and a payload of at most a few KiB per stream, and reads a status, an
/// `apns-id` and sometimes a short JSON body back. NIO's general-purpose HTTP/2 handler (a state
/// machine per stream, flow-control buffers, a frame object and a pipeline event per frame,
/// Huffman coding) cost more CPU than everything else in a request, so this reads and writes
/// frames directly:
/// - request header blocks come from ``HPACKRequestEncoder`` (indexed repeats, raw literals),
///   answers are decoded by NIOHPACK's decoder;
/// - every frame goes into one buffer that the handler writes and flushes once per tick, so a
///   burst of requests becomes one TLS write;
/// - the send windows of RFC 9113 §6.9 are followed (DATA waits for WINDOW_UPDATE), and the
///   connection's receive window is kept at 1 MiB.
///
/// The stream limit is counted once, by the pool (``APNsConnectionPoolStateMachine``), which
/// leases at most the server's SETTINGS_MAX_CONCURRENT_STREAMS per connection. A request that
/// still finds the limit reached (it was leased before the server lowered it) is refused, as
/// the server itself would with REFUSED_STREAM, and the client sends it on another stream.
///
/// `Request` is what a stream's outcome goes to: the handler's promise, a plain value in tests.
struct APNsConnectionStateMachine<Request> {
    /// What the bytes read call for.
    enum Action {
        /// A stream ended: its request gets this outcome.
        case answer(Request, APNsStreamOutcome)
        /// The server's first SETTINGS: the connection takes streams, at most this many at once,
        /// with at most `window` bytes of DATA in flight (what the server granted so far; a
        /// WINDOW_UPDATE after it is a ``windowGrew(_:)``).
        case ready(maxStreams: Int, window: Int)
        /// The server raised the connection's send window beyond what it granted before.
        case windowGrew(Int)
        /// A later SETTINGS changed the stream limit.
        case maxStreamsChanged(Int)
        /// GOAWAY: no new streams; the requests above its last stream id were never processed
        /// (safe to send elsewhere). APNs's reason is the JSON `reason` of the debug data.
        case goingAway(HTTP2ErrorCode, reason: String?, refused: [Request])
        /// The outstanding PING was acknowledged.
        case pingAcknowledged
    }

    /// What became of a request handed to ``send(headers:payload:timeout:now:request:)``.
    enum SendResult: Equatable {
        /// On the wire (in the outbound buffer); its outcome comes as an ``Action/answer(_:_:)``.
        case opened
        /// Not sent: the connection is going away or closing, its stream ids are used up, or
        /// the server's stream limit is reached. Safe to send elsewhere.
        case refused
        /// Not sent: its time was up before it could leave.
        case timedOut
    }

    /// One request on the wire.
    private struct Stream {
        var request: Request
        /// When its request left.
        var sent: NIODeadline
        var deadline: NIODeadline
        /// DATA bytes received on the stream, against the window we advertised.
        var received = 0
        var status: Int?
        var answer = APNsAnswerHeaders()
        var body: ByteBuffer?
    }

    /// HTTP/2's default when the server does not say: unlimited, capped by the pool.
    static var unlimitedStreams: Int { Int(Int32.max) }
    /// A header block larger than this (HEADERS + CONTINUATION) ends the connection.
    static var maxHeaderBlockSize: Int { 64 * 1024 }

    private var streams: [UInt32: Stream] = [:]
    private var nextStreamID: UInt32 = 1
    private var goAwayLastStreamID: UInt32?
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS; `nil` until its first SETTINGS.
    private(set) var maxStreams: Int?
    /// The connection window last reported (with `ready`, or as grown).
    private var reportedWindow = HTTP2WireFrame.defaultWindowSize
    private var sendWindows = HTTP2SendWindows()
    private var receiveWindows = HTTP2ReceiveWindows()
    private var headerBlocks = HTTP2HeaderBlockAssembler(maxSize: APNsConnectionStateMachine.maxHeaderBlockSize)
    private var prefaceWritten = false
    private var pingOutstanding = false
    /// Closing: a protocol error, an unanswered PING, GOAWAY with nothing left in flight, or
    /// the channel went away. No stream opens and no frame is read any more.
    private(set) var isClosing = false

    private var reader = HTTP2FrameReader()
    private var encoder = HPACKRequestEncoder()
    private var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
    private let allocator: ByteBufferAllocator
    /// Frames written since the last ``takeOutbound()``.
    private var outbound: ByteBuffer

    init(allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        self.allocator = allocator
        self.outbound = allocator.buffer(capacity: 4096)
    }

    /// Requests on the wire, waiting for their answer.
    var streamsInFlight: Int { streams.count }

    /// No stream's deadline is earlier than this (it may be of a stream answered since).
    private var earliestDeadline: NIODeadline?

    /// The latest send among the requests answered since ``takeQuickestAnswer(now:)``: the
    /// quickest answer of them took `now` minus it.
    private var latestSentAnswered: NIODeadline?

    /// How long the quickest request answered since the last call took from its send to its
    /// answer (`nil` when none was answered): the pool's measure of the round trip.
    mutating func takeQuickestAnswer(now: NIODeadline) -> TimeAmount? {
        guard let sent = latestSentAnswered else { return nil }
        latestSentAnswered = nil
        return now - sent
    }

    // MARK: - Writing

    /// The frames written since the last call, or `nil` when there are none.
    mutating func takeOutbound() -> ByteBuffer? {
        guard outbound.readableBytes > 0 else { return nil }
        let bytes = outbound
        outbound = allocator.buffer(capacity: max(4096, bytes.readableBytes))
        return bytes
    }

    /// Writes the connection preface (RFC 9113 §3.4) once: the client magic, our SETTINGS (no
    /// pushes, no streams from the server, 1 MiB stream windows) and the connection window
    /// raised to 1 MiB. Returns whether it wrote it now.
    mutating func writePreface() -> Bool {
        guard !prefaceWritten else { return false }
        prefaceWritten = true
        outbound.writeString(HTTP2WireFrame.connectionPreface)
        outbound.writeHTTP2Settings([
            (.maxConcurrentStreams, 0),
            (.initialWindowSize, UInt32(receiveWindows.size)),
            (.enablePush, 0),
        ])
        receiveWindows.open(into: &outbound)
        return true
    }

    /// Opens a stream for a request (HEADERS, then DATA as far as the send windows allow), or
    /// says why not.
    mutating func send(
        headers: HPACKHeaders, payload: ByteBuffer, timeout: TimeAmount, now: NIODeadline, request: Request
    ) -> SendResult {
        guard !isClosing, goAwayLastStreamID == nil, nextStreamID < HTTP2WireFrame.maxStreamID else { return .refused }
        guard timeout > .zero else { return .timedOut }
        if let maxStreams, streams.count >= maxStreams { return .refused }
        let streamID = nextStreamID
        nextStreamID += 2
        streams[streamID] = Stream(request: request, sent: now, deadline: now + timeout)
        earliestDeadline = min(earliestDeadline ?? now + timeout, now + timeout)
        sendWindows.open(streamID)
        writeHeaders(headers, streamID: streamID)
        _ = sendWindows.send(payload, on: streamID, into: &outbound)
        return .opened
    }

    /// Writes a PING unless one is outstanding or the connection is closing; returns whether it
    /// did (the handler then waits for its acknowledgement, ``Action/pingAcknowledged``).
    mutating func ping() -> Bool {
        guard !pingOutstanding, !isClosing else { return false }
        pingOutstanding = true
        var payload = ByteBuffer()
        payload.writeInteger(UInt64(0))
        outbound.writeHTTP2Frame(type: .ping, streamID: 0, payload: payload)
        return true
    }

    /// Answers the requests past their deadline: their streams are reset (RST_STREAM CANCEL)
    /// and the requests returned, to be answered as timed out.
    mutating func expire(now: NIODeadline) -> [Request] {
        // Nothing can have expired before the earliest deadline known: most sweeps end here. A
        // connection at a distance holds hundreds of streams, and scanning them on every sweep
        // cost 3.6% of a worker's CPU at 200 ms.
        guard let earliest = earliestDeadline, earliest <= now else { return [] }
        var expired: [Request] = []
        var next: NIODeadline?
        for (streamID, stream) in streams {
            guard stream.deadline <= now else {
                next = min(next ?? stream.deadline, stream.deadline)
                continue
            }
            var payload = ByteBuffer()
            payload.writeInteger(HTTP2WireErrorCode.cancel.rawValue)
            outbound.writeHTTP2Frame(type: .rstStream, streamID: streamID, payload: payload)
            expired.append(stream.request)
            streams[streamID] = nil
            sendWindows.close(streamID)
        }
        earliestDeadline = next
        return expired
    }

    /// After GOAWAY the connection closes once its last stream has its answer: returns `true`
    /// (and starts closing) when that time has come.
    mutating func closeIfDrained() -> Bool {
        guard goAwayLastStreamID != nil, streams.isEmpty, !isClosing else { return false }
        isClosing = true
        return true
    }

    /// Ends the connection: no new streams, DATA waiting for a window dropped. A protocol error
    /// is told to the peer with a GOAWAY carrying its code. Returns the requests in flight (the
    /// server may have them), or `nil` when the connection was already closing (its requests
    /// were answered then).
    mutating func close(error: HTTP2ConnectionError?) -> [Request]? {
        guard !isClosing else { return nil }
        isClosing = true
        if let error {
            var payload = ByteBuffer()
            payload.writeInteger(UInt32(0))
            payload.writeInteger(error.code.rawValue)
            outbound.writeHTTP2Frame(type: .goAway, streamID: 0, payload: payload)
        }
        sendWindows.closeAll()
        let inFlight = streams.values.map(\.request)
        streams.removeAll()
        return inFlight
    }

    /// One HEADERS frame, with CONTINUATION frames when the block exceeds the server's frame size.
    private mutating func writeHeaders(_ headers: HPACKHeaders, streamID: UInt32) {
        let frameStart = outbound.writerIndex
        outbound.writeRepeatingByte(0, count: HTTP2WireFrame.headerSize)
        encoder.encode(headers, into: &outbound)
        let blockLength = outbound.writerIndex - frameStart - HTTP2WireFrame.headerSize
        let peerMaxFrameSize = sendWindows.peerMaxFrameSize
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

    // MARK: - Reading

    /// Adds bytes read from the connection.
    mutating func read(_ bytes: ByteBuffer) {
        reader.append(bytes)
    }

    /// The next thing the bytes read so far call for, or `nil` once they are used up or the
    /// connection is closing. Frames that call for nothing but frames of our own (a SETTINGS
    /// ACK, a PING's ACK, WINDOW_UPDATE, DATA that moved on) are taken on the way.
    ///
    /// - Throws: a connection error: the handler ends the connection with ``close(error:)``.
    mutating func nextAction() throws(HTTP2ConnectionError) -> Action? {
        while !isClosing, let frame = try reader.next() {
            if let action = try process(frame) { return action }
        }
        guard !isClosing, maxStreams != nil else { return nil }
        if sendWindows.peakConnectionWindow > reportedWindow {
            reportedWindow = sendWindows.peakConnectionWindow
            return .windowGrew(reportedWindow)
        }
        return nil
    }

    private mutating func process(_ frame: HTTP2WireFrame) throws(HTTP2ConnectionError) -> Action? {
        try headerBlocks.check(frame)
        switch frame.kind {
        case .data:
            return try receivedData(frame)
        case .headers, .continuation:
            if frame.kind == .headers, frame.streamID == 0 {
                throw HTTP2ConnectionError(code: .protocolError, message: "HEADERS on stream 0")
            }
            guard var block = try headerBlocks.add(frame) else { return nil }
            return try receivedHeaderBlock(&block.bytes, streamID: block.streamID, endStream: block.endStream)
        case .rstStream:
            guard frame.streamID != 0, frame.payload.readableBytes == 4 else {
                throw HTTP2ConnectionError(code: .protocolError, message: "malformed RST_STREAM")
            }
            let code = frame.payload.getInteger(at: frame.payload.readerIndex, as: UInt32.self)!
            return end(
                frame.streamID,
                code == HTTP2WireErrorCode.refusedStream.rawValue
                    ? .refused : .connectionLost(HTTP2StreamReset(streamID: frame.streamID, errorCode: code)))
        case .settings:
            return try receivedSettings(frame)
        case .pushPromise:
            throw HTTP2ConnectionError(code: .protocolError, message: "PUSH_PROMISE with push disabled")
        case .ping:
            guard frame.streamID == 0, frame.payload.readableBytes == 8 else {
                throw HTTP2ConnectionError(code: .frameSizeError, message: "malformed PING")
            }
            if frame.flags.contains(.ack) {
                guard pingOutstanding else { return nil }
                pingOutstanding = false
                return .pingAcknowledged
            }
            outbound.writeHTTP2Frame(type: .ping, flags: .ack, streamID: 0, payload: frame.payload)
            return nil
        case .goAway:
            guard frame.streamID == 0, frame.payload.readableBytes >= 8 else {
                throw HTTP2ConnectionError(code: .frameSizeError, message: "malformed GOAWAY")
            }
            var payload = frame.payload
            let lastStreamID = payload.readInteger(as: UInt32.self)! & HTTP2WireFrame.maxStreamID
            let code = payload.readInteger(as: UInt32.self)!
            return receivedGoAway(lastStreamID: lastStreamID, code: code, debugData: payload)
        case .windowUpdate:
            _ = try sendWindows.windowUpdate(try frame.windowIncrement(), on: frame.streamID, into: &outbound)
            return nil
        case .priority, .none:
            return nil  // PRIORITY is advisory; frames of unknown types are ignored (RFC 9113 §4.1)
        }
    }

    private mutating func receivedData(_ frame: HTTP2WireFrame) throws(HTTP2ConnectionError) -> Action? {
        guard frame.streamID != 0 else { throw HTTP2ConnectionError(code: .protocolError, message: "DATA on stream 0") }
        let length = frame.payload.readableBytes
        try receiveWindows.received(length, into: &outbound)
        let data = try frame.unpaddedPayload()
        // A stream that timed out or was reset may still receive what was on its way.
        guard var stream = streams[frame.streamID] else { return nil }
        stream.received += length
        try receiveWindows.check(stream: frame.streamID, received: stream.received)
        if data.readableBytes > 0 { stream.body.appendFrameBytes(data) }
        streams[frame.streamID] = stream
        return frame.flags.contains(.endStream) ? finish(frame.streamID) : nil
    }

    private mutating func receivedHeaderBlock(
        _ block: inout ByteBuffer, streamID: UInt32, endStream: Bool
    ) throws(HTTP2ConnectionError) -> Action? {
        // Every block is decoded, even a late one: the decoder's table must follow the server's.
        let headers: HPACKHeaders
        do {
            headers = try decoder.decodeHeaders(from: &block)
        } catch {
            throw HTTP2ConnectionError(code: .compressionError, message: "\(error)")
        }
        guard var stream = streams[streamID] else { return nil }
        if stream.status == nil, let status = Self.readAnswer(headers, into: &stream.answer), status >= 200 {
            stream.status = status
            streams[streamID] = stream
        }
        return endStream ? finish(streamID) : nil
    }

    /// Reads the headers the client keeps into `answer`, in one pass over the block (HTTP/2
    /// names are lowercase), and returns the `:status`; `nil` without one. One pass costs less
    /// than a `first(name:)` per header (each compares every name without regard to case).
    static func readAnswer(_ headers: HPACKHeaders, into answer: inout APNsAnswerHeaders) -> Int? {
        var status: Int?
        for (name, value, _) in headers {
            switch name {
            case ":status": status = Int(value)
            case "apns-id": answer.apnsID = value
            case "retry-after": answer.retryAfter = value
            case "apns-request-id": answer.channel = APNsChannelHeaders(requestID: value, channelID: answer.channel?.channelID)
            case "apns-channel-id": answer.channel = APNsChannelHeaders(requestID: answer.channel?.requestID, channelID: value)
            default: continue
            }
        }
        return status
    }

    private mutating func receivedSettings(_ frame: HTTP2WireFrame) throws(HTTP2ConnectionError) -> Action? {
        guard frame.streamID == 0 else { throw HTTP2ConnectionError(code: .protocolError, message: "SETTINGS on a stream") }
        if frame.flags.contains(.ack) { return nil }
        var advertisedMaxStreams: Int?
        for (id, value) in try frame.settingsParameters() {
            switch HTTP2SettingID(rawValue: id) {
            case .headerTableSize:
                encoder.peerTableSizeChanged(Int(value))
            case .maxConcurrentStreams:
                advertisedMaxStreams = Int(value)
            case .initialWindowSize:
                try sendWindows.setInitialWindowSize(value)
            case .maxFrameSize:
                try sendWindows.setMaxFrameSize(value)
            case .enablePush, .maxHeaderListSize, .none:
                break
            }
        }
        outbound.writeHTTP2FrameHeader(length: 0, type: .settings, flags: .ack, streamID: 0)
        _ = sendWindows.writeBlocked(into: &outbound)
        guard let current = maxStreams else {
            let first = advertisedMaxStreams ?? Self.unlimitedStreams
            maxStreams = first
            reportedWindow = sendWindows.peakConnectionWindow
            return .ready(maxStreams: first, window: reportedWindow)
        }
        guard let advertisedMaxStreams, advertisedMaxStreams != current else { return nil }
        maxStreams = advertisedMaxStreams
        return .maxStreamsChanged(advertisedMaxStreams)
    }

    private mutating func receivedGoAway(lastStreamID: UInt32, code: UInt32, debugData: ByteBuffer) -> Action {
        goAwayLastStreamID = min(goAwayLastStreamID ?? HTTP2WireFrame.maxStreamID, lastStreamID)
        // Streams above the last one were never processed: safe to send elsewhere.
        var refused: [Request] = []
        for (streamID, stream) in streams where streamID > lastStreamID {
            refused.append(stream.request)
            streams[streamID] = nil
            sendWindows.close(streamID)
        }
        return .goingAway(HTTP2ErrorCode(networkCode: Int(code)), reason: Self.reason(inDebugData: debugData), refused: refused)
    }

    private struct GoAwayDebugData: Decodable {
        var reason: String
    }

    /// APNs puts `{"reason":"…"}` into a GOAWAY's debug data.
    static func reason(inDebugData data: ByteBuffer) -> String? {
        guard data.readableBytes > 0, data.readableBytes <= 1024 else { return nil }
        return try? JSONDecoder().decode(GoAwayDebugData.self, from: Data(data.readableBytesView)).reason
    }

    // MARK: - Outcomes

    /// The stream ended (END_STREAM): its answer, or a loss when no status came.
    private mutating func finish(_ streamID: UInt32) -> Action? {
        guard let stream = streams[streamID] else { return nil }
        guard let status = stream.status else {
            return end(streamID, .connectionLost(HTTP2StreamReset(streamID: streamID, errorCode: HTTP2WireErrorCode.protocolError.rawValue)))
        }
        latestSentAnswered = max(latestSentAnswered ?? stream.sent, stream.sent)
        return end(streamID, .response(status: status, headers: stream.answer, body: stream.body))
    }

    private mutating func end(_ streamID: UInt32, _ outcome: APNsStreamOutcome) -> Action? {
        guard let stream = streams.removeValue(forKey: streamID) else { return nil }
        sendWindows.close(streamID)
        return .answer(stream.request, outcome)
    }
}
