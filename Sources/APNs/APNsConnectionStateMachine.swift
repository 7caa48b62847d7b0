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
        /// The server's first SETTINGS: the connection takes streams, at most this many at once.
        case ready(maxStreams: Int)
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
        var deadline: NIODeadline
        /// What the server still lets this stream send.
        var sendWindow: Int
        /// DATA bytes received on the stream, against the window we advertised.
        var received = 0
        var status: Int?
        var apnsID: String?
        var body: ByteBuffer?
    }

    /// A header block arriving in HEADERS + CONTINUATION frames.
    private struct PartialHeaderBlock {
        var streamID: UInt32
        var endStream: Bool
        var block: ByteBuffer
    }

    /// HTTP/2's default when the server does not say: unlimited, capped by the pool.
    static var unlimitedStreams: Int { Int(Int32.max) }
    /// The receive window of the connection and of every stream: ample for error bodies.
    static var receiveWindow: Int { 1 << 20 }
    /// A header block larger than this (HEADERS + CONTINUATION) ends the connection.
    static var maxHeaderBlockSize: Int { 64 * 1024 }

    private var streams: [UInt32: Stream] = [:]
    /// DATA that waits for a send window, in the order it was sent.
    private var blockedData: [(streamID: UInt32, bytes: ByteBuffer)] = []
    private var nextStreamID: UInt32 = 1
    private var goAwayLastStreamID: UInt32?
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS; `nil` until its first SETTINGS.
    private(set) var maxStreams: Int?
    private var peerInitialWindowSize = HTTP2WireFrame.defaultWindowSize
    private var peerMaxFrameSize = HTTP2WireFrame.defaultMaxFrameSize
    private var connectionSendWindow = HTTP2WireFrame.defaultWindowSize
    private var connectionReceiveWindow = HTTP2WireFrame.defaultWindowSize
    private var partialHeaderBlock: PartialHeaderBlock?
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
        outbound.writeString("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
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
        streams[streamID] = Stream(request: request, deadline: now + timeout, sendWindow: peerInitialWindowSize)
        writeHeaders(headers, streamID: streamID)
        if !blockedData.isEmpty {
            blockedData.append((streamID, payload))  // after what already waits, in order
        } else if let rest = writeData(payload, streamID: streamID) {
            blockedData.append((streamID, rest))
        }
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
        var expired: [Request] = []
        for (streamID, stream) in streams where stream.deadline <= now {
            var payload = ByteBuffer()
            payload.writeInteger(HTTP2WireErrorCode.cancel.rawValue)
            outbound.writeHTTP2Frame(type: .rstStream, streamID: streamID, payload: payload)
            expired.append(stream.request)
            streams[streamID] = nil
        }
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
        blockedData.removeAll()
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
    private mutating func writeData(_ payload: ByteBuffer, streamID: UInt32) -> ByteBuffer? {
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
    private mutating func writeBlockedData() {
        guard !blockedData.isEmpty else { return }
        let waiting = blockedData
        blockedData.removeAll()
        for (streamID, bytes) in waiting where streams[streamID] != nil {
            if let rest = writeData(bytes, streamID: streamID) {
                blockedData.append((streamID, rest))
            }
        }
    }

    private mutating func writeWindowUpdate(streamID: UInt32, increment: Int) {
        outbound.writeHTTP2FrameHeader(length: 4, type: .windowUpdate, flags: [], streamID: streamID)
        outbound.writeInteger(UInt32(increment))
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
        return nil
    }

    private mutating func process(_ frame: HTTP2WireFrame) throws(HTTP2ConnectionError) -> Action? {
        if partialHeaderBlock != nil, frame.kind != .continuation {
            throw HTTP2ConnectionError(code: .protocolError, message: "a header block was interrupted")
        }
        switch frame.kind {
        case .data:
            return try receivedData(frame)
        case .headers:
            guard frame.streamID != 0 else { throw HTTP2ConnectionError(code: .protocolError, message: "HEADERS on stream 0") }
            var block = try Self.unpadded(frame)
            if frame.flags.contains(.priority) {
                guard block.readableBytes >= 5 else { throw HTTP2ConnectionError(code: .frameSizeError, message: "short HEADERS") }
                block.moveReaderIndex(forwardBy: 5)
            }
            let endStream = frame.flags.contains(.endStream)
            guard frame.flags.contains(.endHeaders) else {
                partialHeaderBlock = PartialHeaderBlock(streamID: frame.streamID, endStream: endStream, block: block)
                return nil
            }
            return try receivedHeaderBlock(&block, streamID: frame.streamID, endStream: endStream)
        case .continuation:
            guard var partial = partialHeaderBlock, partial.streamID == frame.streamID else {
                throw HTTP2ConnectionError(code: .protocolError, message: "CONTINUATION without a header block")
            }
            partialHeaderBlock = nil
            partial.block.writeImmutableBuffer(frame.payload)
            guard partial.block.readableBytes <= Self.maxHeaderBlockSize else {
                throw HTTP2ConnectionError(code: .protocolError, message: "a header block over \(Self.maxHeaderBlockSize) bytes")
            }
            guard frame.flags.contains(.endHeaders) else {
                partialHeaderBlock = partial
                return nil
            }
            return try receivedHeaderBlock(&partial.block, streamID: partial.streamID, endStream: partial.endStream)
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
            guard frame.payload.readableBytes == 4 else { throw HTTP2ConnectionError(code: .frameSizeError, message: "malformed WINDOW_UPDATE") }
            let increment = Int(frame.payload.getInteger(at: frame.payload.readerIndex, as: UInt32.self)! & 0x7fff_ffff)
            try receivedWindowUpdate(increment, streamID: frame.streamID)
            return nil
        case .priority, .none:
            return nil  // PRIORITY is advisory; frames of unknown types are ignored (RFC 9113 §4.1)
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

    private mutating func receivedData(_ frame: HTTP2WireFrame) throws(HTTP2ConnectionError) -> Action? {
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
        guard var stream = streams[frame.streamID] else { return nil }
        stream.received += length
        guard stream.received <= Self.receiveWindow else {
            throw HTTP2ConnectionError(code: .flowControlError, message: "DATA beyond stream \(frame.streamID)'s window")
        }
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
        if stream.status == nil, let raw = headers.first(name: ":status"), let status = Int(raw), status >= 200 {
            stream.status = status
            stream.apnsID = headers.first(name: "apns-id")
            streams[streamID] = stream
        }
        return endStream ? finish(streamID) : nil
    }

    private mutating func receivedSettings(_ frame: HTTP2WireFrame) throws(HTTP2ConnectionError) -> Action? {
        guard frame.streamID == 0 else { throw HTTP2ConnectionError(code: .protocolError, message: "SETTINGS on a stream") }
        if frame.flags.contains(.ack) { return nil }
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
        writeBlockedData()
        guard let current = maxStreams else {
            let first = advertisedMaxStreams ?? Self.unlimitedStreams
            maxStreams = first
            return .ready(maxStreams: first)
        }
        guard let advertisedMaxStreams, advertisedMaxStreams != current else { return nil }
        maxStreams = advertisedMaxStreams
        return .maxStreamsChanged(advertisedMaxStreams)
    }

    private mutating func receivedWindowUpdate(_ increment: Int, streamID: UInt32) throws(HTTP2ConnectionError) {
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
        writeBlockedData()
    }

    private mutating func receivedGoAway(lastStreamID: UInt32, code: UInt32, debugData: ByteBuffer) -> Action {
        goAwayLastStreamID = min(goAwayLastStreamID ?? HTTP2WireFrame.maxStreamID, lastStreamID)
        // Streams above the last one were never processed: safe to send elsewhere.
        var refused: [Request] = []
        for (streamID, stream) in streams where streamID > lastStreamID {
            refused.append(stream.request)
            streams[streamID] = nil
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
        return end(streamID, .response(status: status, apnsID: stream.apnsID, body: stream.body))
    }

    private mutating func end(_ streamID: UInt32, _ outcome: APNsStreamOutcome) -> Action? {
        guard let stream = streams.removeValue(forKey: streamID) else { return nil }
        return .answer(stream.request, outcome)
    }
}
