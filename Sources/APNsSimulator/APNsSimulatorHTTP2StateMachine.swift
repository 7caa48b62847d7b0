import HTTP2Frames
import NIOCore
import NIOHPACK

/// The server side of one HTTP/2 connection (RFC 9113), as APNs speaks it, without I/O: the
/// client's preface and SETTINGS, its requests (HEADERS, CONTINUATION, DATA), flow control both
/// ways, PING, RST_STREAM, GOAWAY, and the frames of the answers.
///
/// ``APNsSimulatorConnection`` feeds it the bytes it reads, hands each complete request to the
/// request handler, and writes what ``takeOutbound()`` returns. A server for APNs clients needs a
/// small part of HTTP/2: it never pushes and never opens streams, a request is a header block and
/// a payload of a few KiB, and an answer is a status, an `apns-id` and sometimes a short JSON
/// body. NIO's general-purpose HTTP/2 handler (a state machine per stream, a frame object and a
/// pipeline event per frame, header validation, Huffman coding of answers) cost the simulator
/// more than the requests themselves; the simulator is the ceiling of every end-to-end benchmark
/// on a shared machine and a load-test target of its own.
///
/// Answers are written without the dynamic table (the first header block sets its size to 0), so
/// what the client says of its decoder's table never matters, and without Huffman coding.
struct APNsSimulatorHTTP2StateMachine {
    /// What the bytes read call for.
    enum Action: Equatable {
        /// A request is complete (END_STREAM): answer it with ``respond(streamID:status:apnsID:body:)``.
        case request(streamID: UInt32, headers: HPACKHeaders, body: ByteBuffer)
        /// A new stream opened (before its request is complete, which follows as a
        /// ``request(streamID:headers:body:)``).
        case streamOpened(UInt32)
        /// A stream ended without an answer: the client reset it.
        case streamClosed(UInt32)
        /// The client sent a PING (already acknowledged).
        case ping
    }

    /// One stream the client opened and the server has not answered completely.
    private struct Stream {
        var headers: HPACKHeaders?
        var body: ByteBuffer?
        /// END_STREAM received: the request is complete.
        var requestComplete = false
        /// DATA bytes received, against the stream window we advertised.
        var received = 0
    }

    /// What the server advertises and enforces: its windows and header limits.
    let profile: APNsSimulatorHTTP2Profile

    private var streams: [UInt32: Stream] = [:]
    /// The SETTINGS_MAX_CONCURRENT_STREAMS this server advertised last.
    private(set) var maxConcurrentStreams: Int
    /// The stream limit in force: a SETTINGS value applies once the client acknowledged it
    /// (RFC 9113 §6.5.3), so a client that opened streams before it read the server's first
    /// SETTINGS broke no limit. Unlimited until then, as HTTP/2 starts.
    private var enforcedMaxConcurrentStreams = Int.max
    /// The stream limit each SETTINGS sent and not acknowledged yet carries (`nil`: none).
    private var unacknowledgedLimits: [Int?] = []
    /// The highest stream id the client opened: the last one a GOAWAY promises to serve.
    private(set) var highestStreamID: UInt32 = 0
    /// Set once this server sent GOAWAY: streams above it are refused.
    private(set) var goAwayLastStreamID: UInt32?
    private var sendWindows = HTTP2SendWindows()
    private var receiveWindows: HTTP2ReceiveWindows
    private var headerBlocks: HTTP2HeaderBlockAssembler
    private var prefaceBytesSeen = 0
    private var tableSizeAnnounced = false

    /// Actions a frame called for beyond the one it returned (a request complete in the HEADERS
    /// that opened its stream).
    private var pending: [Action] = []
    private var reader = HTTP2FrameReader()
    private var decoder: HPACKDecoder
    /// The last header block that left the decoder's table as it was, and what it decoded to:
    /// a client that sends the same block again (as load generators do) is not decoded again.
    private var lastBlock: (bytes: ByteBuffer, headers: HPACKHeaders)?
    /// Frames written since the last ``takeOutbound()``.
    private var outbound = ByteBuffer()

    /// - Parameters:
    ///   - maxConcurrentStreams: the stream limit of the server's first SETTINGS.
    ///   - profile: the windows and header limits it advertises and enforces.
    init(maxConcurrentStreams: Int, profile: APNsSimulatorHTTP2Profile = .generous) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.profile = profile
        self.receiveWindows = HTTP2ReceiveWindows(size: profile.receiveWindow)
        self.headerBlocks = HTTP2HeaderBlockAssembler(maxSize: 4 * profile.maxHeaderListSize)
        self.decoder = HPACKDecoder(
            allocator: ByteBufferAllocator(), maxDynamicTableSize: HPACKDecoder.maxDynamicTableSize,
            maxHeaderListSize: profile.maxHeaderListSize)
        outbound.reserveCapacity(4096)
    }

    /// Streams open: requests being read or waiting for their answer.
    var openStreams: Int { streams.count }

    // MARK: - Writing

    /// The frames written since the last call, or `nil` when there are none.
    mutating func takeOutbound() -> ByteBuffer? {
        guard outbound.readableBytes > 0 else { return nil }
        let bytes = outbound
        outbound = ByteBuffer()
        outbound.reserveCapacity(max(4096, bytes.readableBytes))
        return bytes
    }

    /// The server's preface (RFC 9113 §3.4): its SETTINGS, and the connection window raised to
    /// the profile's (none raised at Apple's 65,535 bytes).
    mutating func writePreface() {
        var settings: [(HTTP2SettingID, UInt32)] = []
        if profile.advertisesProtocolDefaults {
            settings.append((.headerTableSize, UInt32(HTTP2WireFrame.defaultHeaderTableSize)))
        }
        settings.append((.maxConcurrentStreams, UInt32(maxConcurrentStreams)))
        settings.append((.initialWindowSize, UInt32(receiveWindows.size)))
        if profile.advertisesProtocolDefaults {
            settings.append((.maxFrameSize, UInt32(HTTP2WireFrame.defaultMaxFrameSize)))
        }
        settings.append((.maxHeaderListSize, UInt32(profile.maxHeaderListSize)))
        outbound.writeHTTP2Settings(settings)
        unacknowledgedLimits.append(maxConcurrentStreams)
        receiveWindows.open(into: &outbound)
    }

    /// Advertises a new stream limit (APNs raises it after a connection's first authenticated
    /// request).
    mutating func setMaxConcurrentStreams(_ limit: Int) {
        guard limit != maxConcurrentStreams else { return }
        maxConcurrentStreams = limit
        outbound.writeHTTP2Settings([(.maxConcurrentStreams, UInt32(limit))])
        unacknowledgedLimits.append(limit)
    }

    /// Answers stream `streamID`: HEADERS with `:status` and `apns-id` (and `content-type` when a
    /// body follows), then the body in DATA as the client's windows allow. The stream closes
    /// once the answer is written whole. An answer to a stream that is gone (reset by the
    /// client) is dropped; returns whether it was written.
    @discardableResult
    mutating func respond(
        streamID: UInt32, status: Int, apnsID: String?, retryAfter: String? = nil, headers: [(String, String)] = [], body: ByteBuffer?
    ) -> Bool {
        guard let stream = streams[streamID], stream.requestComplete else { return false }
        let frameStart = outbound.writerIndex
        outbound.writeRepeatingByte(0, count: HTTP2WireFrame.headerSize)
        if !tableSizeAnnounced {
            tableSizeAnnounced = true
            outbound.writeInteger(UInt8(0x20))  // dynamic table size update: 0
        }
        Self.writeStatus(status, into: &outbound)
        if let apnsID {
            // apns-id: a literal without indexing, with a literal name.
            outbound.writeInteger(UInt8(0x00))
            Self.writeString("apns-id", into: &outbound)
            Self.writeString(apnsID, into: &outbound)
        }
        for (name, value) in headers {
            outbound.writeInteger(UInt8(0x00))
            Self.writeString(name, into: &outbound)
            Self.writeString(value, into: &outbound)
        }
        if let retryAfter {
            // retry-after (static name index 53): a literal without indexing.
            outbound.writeBytes([0x0f, 0x26])
            Self.writeString(retryAfter, into: &outbound)
        }
        if body != nil {
            // content-type (static name index 31): a literal without indexing.
            outbound.writeBytes([0x0f, 0x10])
            Self.writeString("application/json", into: &outbound)
        }
        let blockLength = outbound.writerIndex - frameStart - HTTP2WireFrame.headerSize
        outbound.setHTTP2FrameHeader(
            at: frameStart, length: blockLength, type: .headers, flags: body == nil ? [.endHeaders, .endStream] : .endHeaders,
            streamID: streamID)
        guard let body else {
            close(streamID)
            return true
        }
        if sendWindows.send(body, on: streamID, into: &outbound) {
            close(streamID)
        }
        return true
    }

    /// Sends GOAWAY with `lastStreamID` (the client's streams above it are not processed) and
    /// APNs's reason as debug data. Later streams are refused.
    mutating func goAway(lastStreamID: UInt32, errorCode: HTTP2WireErrorCode, reason: String?) {
        goAwayLastStreamID = min(goAwayLastStreamID ?? HTTP2WireFrame.maxStreamID, lastStreamID)
        var payload = ByteBuffer()
        payload.writeInteger(lastStreamID & HTTP2WireFrame.maxStreamID)
        payload.writeInteger(errorCode.rawValue)
        if let reason { payload.writeString(#"{"reason":"\#(reason)"}"#) }
        outbound.writeHTTP2Frame(type: .goAway, streamID: 0, payload: payload)
    }

    /// Writes a PING of our own (a marker behind everything written before it).
    mutating func ping() {
        var payload = ByteBuffer()
        payload.writeInteger(UInt64(0))
        outbound.writeHTTP2Frame(type: .ping, streamID: 0, payload: payload)
    }

    /// A stream ended: answered whole, or reset by the client.
    private mutating func close(_ streamID: UInt32) {
        streams[streamID] = nil
        sendWindows.close(streamID)
    }

    private mutating func writeReset(streamID: UInt32, _ code: HTTP2WireErrorCode) {
        outbound.writeHTTP2FrameHeader(length: 4, type: .rstStream, flags: [], streamID: streamID)
        outbound.writeInteger(code.rawValue)
    }

    /// `:status`: indexed when the static table has it (RFC 7541 Appendix A), else a literal with
    /// the indexed name.
    private static func writeStatus(_ status: Int, into buffer: inout ByteBuffer) {
        switch status {
        case 200: buffer.writeInteger(UInt8(0x88))
        case 204: buffer.writeInteger(UInt8(0x89))
        case 206: buffer.writeInteger(UInt8(0x8a))
        case 304: buffer.writeInteger(UInt8(0x8b))
        case 400: buffer.writeInteger(UInt8(0x8c))
        case 404: buffer.writeInteger(UInt8(0x8d))
        case 500: buffer.writeInteger(UInt8(0x8e))
        default:
            buffer.writeInteger(UInt8(0x08))
            writeString(String(status), into: &buffer)
        }
    }

    /// A string literal without Huffman coding (lengths here stay below 127).
    private static func writeString(_ string: String, into buffer: inout ByteBuffer) {
        let length = string.utf8.count
        if length < 127 {
            buffer.writeInteger(UInt8(length))
        } else {
            buffer.writeInteger(UInt8(127))
            var rest = length - 127
            while rest >= 128 {
                buffer.writeInteger(UInt8(truncatingIfNeeded: rest & 0x7f) | 0x80)
                rest >>= 7
            }
            buffer.writeInteger(UInt8(rest))
        }
        buffer.writeString(string)
    }

    // MARK: - Reading

    /// Adds bytes read from the connection.
    mutating func read(_ bytes: ByteBuffer) {
        var bytes = bytes
        if prefaceBytesSeen < HTTP2WireFrame.connectionPreface.utf8.count {
            let expected = Array(HTTP2WireFrame.connectionPreface.utf8)
            let count = min(bytes.readableBytes, expected.count - prefaceBytesSeen)
            // A wrong preface is reported by nextAction() as a protocol error.
            if let seen = bytes.readBytes(length: count), seen == Array(expected[prefaceBytesSeen..<(prefaceBytesSeen + count)]) {
                prefaceBytesSeen += count
            } else {
                prefaceBytesSeen = -1
                return
            }
        }
        reader.append(bytes)
    }

    /// The next thing the bytes read so far call for, or `nil` once they are used up.
    ///
    /// - Throws: a connection error: end the connection with a GOAWAY carrying its code
    ///   (``goAway(lastStreamID:errorCode:reason:)``).
    mutating func nextAction() throws(HTTP2ConnectionError) -> Action? {
        guard prefaceBytesSeen >= 0 else {
            throw HTTP2ConnectionError(code: .protocolError, message: "the client's connection preface is wrong")
        }
        guard prefaceBytesSeen == HTTP2WireFrame.connectionPreface.utf8.count else { return nil }
        if !pending.isEmpty { return pending.removeFirst() }
        while let frame = try reader.next() {
            if let action = try process(frame) { return action }
        }
        return nil
    }

    private mutating func process(_ frame: HTTP2WireFrame) throws(HTTP2ConnectionError) -> Action? {
        try headerBlocks.check(frame)
        switch frame.kind {
        case .headers, .continuation:
            guard let block = try headerBlocks.add(frame) else { return nil }
            return try receivedHeaderBlock(block.bytes, streamID: block.streamID, endStream: block.endStream)
        case .data:
            return try receivedData(frame)
        case .rstStream:
            guard frame.streamID != 0, frame.payload.readableBytes == 4 else {
                throw HTTP2ConnectionError(code: .protocolError, message: "malformed RST_STREAM")
            }
            guard streams[frame.streamID] != nil else { return nil }
            close(frame.streamID)
            return .streamClosed(frame.streamID)
        case .settings:
            try receivedSettings(frame)
            return nil
        case .ping:
            guard frame.streamID == 0, frame.payload.readableBytes == 8 else {
                throw HTTP2ConnectionError(code: .frameSizeError, message: "malformed PING")
            }
            guard !frame.flags.contains(.ack) else { return nil }
            outbound.writeHTTP2Frame(type: .ping, flags: .ack, streamID: 0, payload: frame.payload)
            return .ping
        case .windowUpdate:
            for finished in try sendWindows.windowUpdate(try frame.windowIncrement(), on: frame.streamID, into: &outbound) {
                close(finished)
            }
            return nil
        case .pushPromise:
            throw HTTP2ConnectionError(code: .protocolError, message: "a client sent PUSH_PROMISE")
        case .goAway, .priority, .none:
            // The client going away closes its side; PRIORITY is advisory; unknown types are
            // ignored (RFC 9113 §4.1).
            return nil
        }
    }

    private mutating func receivedHeaderBlock(_ block: ByteBuffer, streamID: UInt32, endStream: Bool) throws(HTTP2ConnectionError) -> Action? {
        guard streamID != 0, streamID & 1 == 1 else {
            throw HTTP2ConnectionError(code: .protocolError, message: "HEADERS on stream \(streamID)")
        }
        let headers = try decode(block)
        if var stream = streams[streamID] {
            // Trailers: nothing APNs reads; they may end the request.
            if endStream, !stream.requestComplete {
                stream.requestComplete = true
                streams[streamID] = stream
                return .request(streamID: streamID, headers: stream.headers ?? HPACKHeaders(), body: stream.body ?? ByteBuffer())
            }
            return nil
        }
        guard streamID > highestStreamID else {
            throw HTTP2ConnectionError(code: .protocolError, message: "stream \(streamID) is not new (highest so far \(highestStreamID))")
        }
        highestStreamID = streamID
        if let last = goAwayLastStreamID, streamID > last {
            return nil  // after GOAWAY: not processed, as the client was told
        }
        guard streams.count < enforcedMaxConcurrentStreams else {
            writeReset(streamID: streamID, .refusedStream)
            return nil
        }
        streams[streamID] = Stream(headers: headers, requestComplete: endStream)
        sendWindows.open(streamID)
        if endStream {
            pending.append(.request(streamID: streamID, headers: headers, body: ByteBuffer()))
        }
        return .streamOpened(streamID)
    }

    /// Decodes a header block; a block that adds nothing to the decoder's table and equals the
    /// last such block is not decoded again.
    private mutating func decode(_ block: ByteBuffer) throws(HTTP2ConnectionError) -> HPACKHeaders {
        if let last = lastBlock, last.bytes == block { return last.headers }
        var copy = block
        let headers: HPACKHeaders
        do {
            headers = try decoder.decodeHeaders(from: &copy)
        } catch {
            throw HTTP2ConnectionError(code: .compressionError, message: "\(error)")
        }
        lastBlock = Self.leavesTableAsItWas(block) ? (block, headers) : nil
        return headers
    }

    /// Whether a header block only reads the decoder's table: indexed fields and literals
    /// without indexing, no insertion and no table size update (RFC 7541 §6).
    static func leavesTableAsItWas(_ block: ByteBuffer) -> Bool {
        var block = block
        func skipInteger(prefixBits: Int) -> Bool {
            guard let first = block.readInteger(as: UInt8.self) else { return false }
            guard first & UInt8((1 << prefixBits) - 1) == UInt8((1 << prefixBits) - 1) else { return true }
            while let byte = block.readInteger(as: UInt8.self) {
                if byte & 0x80 == 0 { return true }
            }
            return false
        }
        func skipString() -> Bool {
            guard let first = block.getInteger(at: block.readerIndex, as: UInt8.self) else { return false }
            var length = Int(first & 0x7f)
            block.moveReaderIndex(forwardBy: 1)
            if length == 0x7f {
                var shift = 0
                while let byte = block.readInteger(as: UInt8.self) {
                    length += Int(byte & 0x7f) << shift
                    shift += 7
                    if byte & 0x80 == 0 { break }
                    if shift > 28 { return false }
                }
            }
            guard length <= block.readableBytes else { return false }
            block.moveReaderIndex(forwardBy: length)
            return true
        }
        while let first = block.getInteger(at: block.readerIndex, as: UInt8.self) {
            if first & 0x80 != 0 {
                guard skipInteger(prefixBits: 7) else { return false }  // indexed field
            } else if first & 0xe0 == 0x00 {
                // Literal without indexing (0000) or never indexed (0001): name index or literal name.
                let nameIndexed = first & 0x0f != 0
                guard skipInteger(prefixBits: 4) else { return false }
                if !nameIndexed, !skipString() { return false }
                guard skipString() else { return false }
            } else {
                return false  // literal with incremental indexing (01) or table size update (001)
            }
        }
        return true
    }

    private mutating func receivedData(_ frame: HTTP2WireFrame) throws(HTTP2ConnectionError) -> Action? {
        guard frame.streamID != 0 else { throw HTTP2ConnectionError(code: .protocolError, message: "DATA on stream 0") }
        let length = frame.payload.readableBytes
        try receiveWindows.received(length, into: &outbound)
        let data = try frame.unpaddedPayload()
        guard var stream = streams[frame.streamID], !stream.requestComplete else { return nil }
        stream.received += length
        try receiveWindows.check(stream: frame.streamID, received: stream.received)
        if data.readableBytes > 0 { stream.body.appendFrameBytes(data) }
        guard frame.flags.contains(.endStream) else {
            streams[frame.streamID] = stream
            return nil
        }
        stream.requestComplete = true
        streams[frame.streamID] = stream
        return .request(streamID: frame.streamID, headers: stream.headers ?? HPACKHeaders(), body: stream.body ?? ByteBuffer())
    }

    private mutating func receivedSettings(_ frame: HTTP2WireFrame) throws(HTTP2ConnectionError) {
        guard frame.streamID == 0 else { throw HTTP2ConnectionError(code: .protocolError, message: "SETTINGS on a stream") }
        if frame.flags.contains(.ack) {
            guard !unacknowledgedLimits.isEmpty else { return }
            if let limit = unacknowledgedLimits.removeFirst() { enforcedMaxConcurrentStreams = limit }
            return
        }
        for (id, value) in try frame.settingsParameters() {
            switch HTTP2SettingID(rawValue: id) {
            case .initialWindowSize:
                try sendWindows.setInitialWindowSize(value)
            case .maxFrameSize:
                try sendWindows.setMaxFrameSize(value)
            case .enablePush:
                guard value <= 1 else { throw HTTP2ConnectionError(code: .protocolError, message: "SETTINGS_ENABLE_PUSH \(value)") }
            case .headerTableSize, .maxConcurrentStreams, .maxHeaderListSize, .none:
                break  // the answers use no dynamic table; the server opens no streams
            }
        }
        outbound.writeHTTP2FrameHeader(length: 0, type: .settings, flags: .ack, streamID: 0)
        for finished in sendWindows.writeBlocked(into: &outbound) {
            close(finished)
        }
    }
}
