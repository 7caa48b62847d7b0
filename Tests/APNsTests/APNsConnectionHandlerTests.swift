import HTTP2Frames
import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import Synchronization
import Testing

@testable import APNs

/// The client's HTTP/2 codec against a scripted server on an `EmbeddedChannel`: flow control,
/// the stream limit, CONTINUATION, GOAWAY, PING, resets and timeouts, byte by byte. The
/// server's header blocks come from NIOHPACK's encoder and the client's are read with its
/// decoder, so each side is checked by an independent implementation.
@Suite("APNs connection handler (HTTP/2 codec)")
struct APNsConnectionHandlerTests {
    /// What the handler told the pool.
    final class EventLog: Sendable {
        let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    /// One connection: the handler under test and the server's side of the bytes.
    final class Connection {
        let channel = EmbeddedChannel()
        let handler: APNsConnectionHandler
        let events = EventLog()
        private var client = ClientFrames()
        private var encoder = HPACKEncoder(allocator: ByteBufferAllocator())

        init() throws {
            let events = self.events
            handler = APNsConnectionHandler(
                events: .init(
                    ready: { maxStreams, _ in events.add("ready \(maxStreams)") },
                    maxStreamsChanged: { events.add("maxStreams \($0)") },
                    goingAway: { code, reason in events.add("goAway \(code) \(reason ?? "-")") },
                    unanswered: { events.add("unanswered") },
                    answered: { events.add("answered") },
                    unresponsive: { events.add("unresponsive") },
                    streamsEnded: { count, _ in events.add("ended \(count)") },
                    closed: { events.add("closed") }),
                pingInterval: nil, pingTimeout: .seconds(1))
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        }

        /// The frames the client wrote since the last call (after the preface, on the first).
        func written() throws -> [HTTP2WireFrame] {
            channel.embeddedEventLoop.run()
            while let bytes = try channel.readOutbound(as: ByteBuffer.self) { client.append(bytes) }
            return try client.frames()
        }

        /// Decodes the client's header block (HEADERS without CONTINUATION).
        func requestHeaders(_ frame: HTTP2WireFrame) throws -> HPACKHeaders {
            try client.headers(frame)
        }

        func serverSends(_ type: HTTP2WireFrame.Kind, flags: HTTP2WireFrame.Flags = [], stream: UInt32, _ payload: ByteBuffer = ByteBuffer()) throws {
            var bytes = ByteBuffer()
            bytes.writeHTTP2Frame(type: type, flags: flags, streamID: stream, payload: payload)
            try channel.writeInbound(bytes)
            channel.embeddedEventLoop.run()
        }

        func serverSettings(_ settings: [(UInt16, UInt32)]) throws {
            var payload = ByteBuffer()
            for (id, value) in settings {
                payload.writeInteger(id)
                payload.writeInteger(value)
            }
            try serverSends(.settings, stream: 0, payload)
        }

        func responseBlock(status: Int, apnsID: String) throws -> ByteBuffer {
            var block = ByteBuffer()
            try encoder.encode(headers: [":status": "\(status)", "apns-id": apnsID], to: &block)
            return block
        }

        func send(payload: ByteBuffer = ByteBuffer(string: "{\"aps\":{}}"), timeout: TimeAmount = .seconds(10)) -> EventLoopFuture<APNsStreamOutcome>
        {
            let promise = channel.eventLoop.makePromise(of: APNsStreamOutcome.self)
            var headers = HPACKHeaders()
            headers.add(name: ":method", value: "POST")
            headers.add(name: ":scheme", value: "https")
            headers.add(name: ":path", value: "/3/device/abcd", indexing: .nonIndexable)
            headers.add(name: "apns-topic", value: "com.example.app")
            handler.send(headers: headers, payload: payload, timeout: timeout, promise: promise)
            channel.embeddedEventLoop.run()
            return promise.futureResult
        }

        /// Opens the connection the way a server does: SETTINGS, then read the client's ACK.
        func ready(_ settings: [(UInt16, UInt32)] = []) throws {
            _ = try written()
            try serverSettings(settings)
            let frames = try written()
            #expect(frames.contains { $0.kind == .settings && $0.flags.contains(.ack) })
        }
    }

    /// A comparable summary of an outcome.
    /// `nil` while the request has no outcome.
    static func outcome(_ future: EventLoopFuture<APNsStreamOutcome>) -> String? {
        let result = EventLog()
        future.whenSuccess { outcome in
            switch outcome {
            case .response(let status, let headers, let body):
                result.add("\(status) \(headers.apnsID ?? "-") \(body.map { String(buffer: $0) } ?? "-")")
            case .refused: result.add("refused")
            case .connectionLost: result.add("lost")
            case .timedOut: result.add("timeout")
            }
        }
        return result.all.first
    }

    @Test("opens with the preface, its SETTINGS and a 1 MiB connection window")
    func preface() throws {
        let connection = try Connection()
        connection.channel.embeddedEventLoop.run()
        let first = try #require(try connection.channel.readOutbound(as: ByteBuffer.self))
        #expect(first.getString(at: first.readerIndex, length: 24) == ClientFrames.magic)
        var reader = HTTP2FrameReader()
        reader.append(first.getSlice(at: first.readerIndex + 24, length: first.readableBytes - 24)!)
        let settings = try #require(try reader.next())
        #expect(settings.kind == .settings && settings.streamID == 0 && settings.flags.isEmpty)
        var payload = settings.payload
        var values: [UInt16: UInt32] = [:]
        while let id = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) { values[id] = value }
        #expect(values == [0x3: 0, 0x4: 1 << 20, 0x2: 0])
        let window = try #require(try reader.next())
        #expect(window.kind == .windowUpdate && window.streamID == 0)
        #expect(window.payload.getInteger(at: window.payload.readerIndex, as: UInt32.self) == UInt32((1 << 20) - 65_535))
        #expect(connection.events.all.isEmpty)
    }

    @Test("ready at the server's first SETTINGS; a request beyond its stream limit is refused, as the server would")
    func streamLimit() throws {
        let connection = try Connection()
        try connection.ready([(0x3, 1)])
        #expect(connection.events.all == ["ready 1"])

        let first = connection.send()
        let second = connection.send()
        #expect(Self.outcome(second) == "refused")
        var frames = try connection.written()
        #expect(frames.map(\.kind) == [.headers, .data])
        #expect(frames[0].streamID == 1)
        let headers = try connection.requestHeaders(frames[0])
        #expect(headers.first(name: ":path") == "/3/device/abcd")
        #expect(headers.first(name: "apns-topic") == "com.example.app")
        #expect(frames[1].flags.contains(.endStream))
        #expect(String(buffer: frames[1].payload) == "{\"aps\":{}}")

        try connection.serverSends(.headers, flags: [.endHeaders, .endStream], stream: 1, try connection.responseBlock(status: 200, apnsID: "A"))
        #expect(Self.outcome(first) == "200 A -")
        let third = connection.send()
        frames = try connection.written()
        #expect(frames.map(\.kind) == [.headers, .data])
        #expect(frames[0].streamID == 3)
        #expect(Self.outcome(third) == nil)

        try connection.serverSettings([(0x3, 5)])
        #expect(connection.events.all == ["ready 1", "ended 1", "ended 1", "maxStreams 5"])
    }

    @Test("the pool hears of ended streams once per read, with how many")
    func endedStreamsOncePerRead() throws {
        let connection = try Connection()
        try connection.ready()
        let requests = (0..<3).map { _ in connection.send() }
        _ = try connection.written()
        var answers = ByteBuffer()
        for stream in [UInt32(1), 3, 5] {
            answers.writeHTTP2Frame(
                type: .headers, flags: [.endHeaders, .endStream], streamID: stream,
                payload: try connection.responseBlock(status: 200, apnsID: "R\(stream)"))
        }
        try connection.channel.writeInbound(answers)
        #expect(requests.map { Self.outcome($0) } == ["200 R1 -", "200 R3 -", "200 R5 -"])
        #expect(connection.events.all == ["ready 2147483647", "ended 3"])
    }

    @Test("DATA waits for the stream's and the connection's send windows")
    func sendWindows() throws {
        let connection = try Connection()
        try connection.ready([(0x4, 10)])
        let small = connection.send(payload: ByteBuffer(repeating: 1, count: 100))
        var frames = try connection.written()
        #expect(frames.map(\.kind) == [.headers, .data])
        #expect(frames[1].payload.readableBytes == 10 && !frames[1].flags.contains(.endStream))

        var increment = ByteBuffer()
        increment.writeInteger(UInt32(50))
        try connection.serverSends(.windowUpdate, stream: 1, increment)
        frames = try connection.written()
        #expect(frames.map { $0.payload.readableBytes } == [50])
        #expect(!frames[0].flags.contains(.endStream))
        increment.clear()
        increment.writeInteger(UInt32(1_000))
        try connection.serverSends(.windowUpdate, stream: 1, increment)
        frames = try connection.written()
        #expect(frames.map { $0.payload.readableBytes } == [40])
        #expect(frames[0].flags.contains(.endStream))
        try connection.serverSends(.headers, flags: [.endHeaders, .endStream], stream: 1, try connection.responseBlock(status: 200, apnsID: "S"))
        #expect(Self.outcome(small) == "200 S -")

        // A large stream window: now the connection's 65,535 bytes (less the 100 sent) and the
        // 16 KiB frame size bound the DATA.
        try connection.serverSettings([(0x4, 1 << 20)])
        _ = try connection.written()
        _ = connection.send(payload: ByteBuffer(repeating: 2, count: 70_000))
        frames = try connection.written()
        #expect(frames.first?.kind == .headers)
        let sizes = frames.dropFirst().map { $0.payload.readableBytes }
        #expect(sizes == [16_384, 16_384, 16_384, 16_283])
        #expect(!frames.contains { $0.flags.contains(.endStream) })
        increment.clear()
        increment.writeInteger(UInt32(100_000))
        try connection.serverSends(.windowUpdate, stream: 0, increment)
        frames = try connection.written()
        #expect(frames.map { $0.payload.readableBytes } == [70_000 - 16_384 * 3 - 16_283])
        #expect(frames.last?.flags.contains(.endStream) == true)
    }

    @Test("an answer's header block may continue in CONTINUATION frames; its body follows in DATA")
    func continuation() throws {
        let connection = try Connection()
        try connection.ready()
        let request = connection.send()
        _ = try connection.written()
        var block = try connection.responseBlock(status: 400, apnsID: "C")
        let head = block.readSlice(length: 3)!
        try connection.serverSends(.headers, stream: 1, head)
        try connection.serverSends(.continuation, flags: .endHeaders, stream: 1, block)
        #expect(Self.outcome(request) == nil)
        try connection.serverSends(.data, flags: .endStream, stream: 1, ByteBuffer(string: "{\"reason\":\"BadDeviceToken\"}"))
        #expect(Self.outcome(request) == "400 C {\"reason\":\"BadDeviceToken\"}")
    }

    @Test("a header block interrupted by another frame ends the connection with a PROTOCOL_ERROR GOAWAY")
    func interruptedHeaderBlock() throws {
        let connection = try Connection()
        try connection.ready()
        let request = connection.send()
        _ = try connection.written()
        var block = try connection.responseBlock(status: 200, apnsID: "X")
        try connection.serverSends(.headers, stream: 1, block.readSlice(length: 2)!)
        try connection.serverSends(.ping, stream: 0, ByteBuffer(repeating: 0, count: 8))
        #expect(Self.outcome(request) == "lost")
        let frames = try connection.written()
        let goAway = try #require(frames.first { $0.kind == .goAway })
        #expect(goAway.payload.getInteger(at: goAway.payload.readerIndex + 4, as: UInt32.self) == 1)
        #expect(!connection.channel.isActive)
        #expect(connection.events.all.last == "closed")
    }

    @Test("GOAWAY: streams above its last stream id are refused, the rest answered, then the connection closes")
    func goAway() throws {
        let connection = try Connection()
        try connection.ready()
        let answered = connection.send()
        let refused = connection.send()
        _ = try connection.written()
        var payload = ByteBuffer()
        payload.writeInteger(UInt32(1))
        payload.writeInteger(UInt32(0))
        payload.writeString(#"{"reason":"Shutdown"}"#)
        try connection.serverSends(.goAway, stream: 0, payload)
        #expect(Self.outcome(refused) == "refused")
        #expect(Self.outcome(answered) == nil)
        #expect(connection.events.all == ["ready 2147483647", "goAway \(HTTP2ErrorCode.noError) Shutdown", "ended 1"])
        #expect(Self.outcome(connection.send()) == "refused")
        #expect(connection.channel.isActive)
        try connection.serverSends(.headers, flags: [.endHeaders, .endStream], stream: 1, try connection.responseBlock(status: 200, apnsID: "G"))
        #expect(Self.outcome(answered) == "200 G -")
        #expect(!connection.channel.isActive)
    }

    @Test("PING is acknowledged with its data; RST_STREAM REFUSED_STREAM is a refusal, any other code a loss")
    func pingAndResets() throws {
        let connection = try Connection()
        try connection.ready()
        try connection.serverSends(.ping, stream: 0, ByteBuffer(bytes: [1, 2, 3, 4, 5, 6, 7, 8]))
        let ack = try #require(try connection.written().first)
        #expect(ack.kind == .ping && ack.flags.contains(.ack))
        #expect(Array(ack.payload.readableBytesView) == [1, 2, 3, 4, 5, 6, 7, 8])

        let refused = connection.send()
        let lost = connection.send()
        _ = try connection.written()
        var code = ByteBuffer()
        code.writeInteger(UInt32(0x7))
        try connection.serverSends(.rstStream, stream: 1, code)
        code.clear()
        code.writeInteger(UInt32(0x2))
        try connection.serverSends(.rstStream, stream: 3, code)
        #expect(Self.outcome(refused) == "refused")
        #expect(Self.outcome(lost) == "lost")
        #expect(connection.channel.isActive)
    }

    @Test("a request past its deadline is answered as timed out and its stream cancelled")
    func timeout() throws {
        let connection = try Connection()
        try connection.ready()
        let request = connection.send(timeout: .milliseconds(100))
        _ = try connection.written()
        connection.channel.embeddedEventLoop.advanceTime(by: .milliseconds(60))
        #expect(Self.outcome(request) == nil)
        connection.channel.embeddedEventLoop.advanceTime(by: .milliseconds(60))
        #expect(Self.outcome(request) == "timeout")
        let reset = try #require(try connection.written().first)
        #expect(reset.kind == .rstStream && reset.streamID == 1)
        #expect(reset.payload.getInteger(at: reset.payload.readerIndex, as: UInt32.self) == 0x8)
        // A late answer to the cancelled stream is read and dropped.
        try connection.serverSends(.headers, flags: [.endHeaders, .endStream], stream: 1, try connection.responseBlock(status: 200, apnsID: "L"))
        #expect(connection.channel.isActive)
    }

    /// A ready connection with two requests sent; the first, due in 100 ms, has timed out.
    /// Returns the connection and the second request's outcome (due in 10 s).
    static func firstOfTwoTimedOut() throws -> (Connection, EventLoopFuture<APNsStreamOutcome>) {
        let connection = try Connection()
        try connection.ready()
        let late = connection.send(timeout: .milliseconds(100))
        let patient = connection.send(timeout: .seconds(10))
        _ = try connection.written()
        connection.channel.embeddedEventLoop.advanceTime(by: .milliseconds(120))
        #expect(Self.outcome(late) == "timeout")
        return (connection, patient)
    }

    @Test("a request past its deadline: the pool hears of it before the stream ends, a PING goes out, its acknowledgement clears it")
    func unansweredRequestProvesAlive() throws {
        let (connection, patient) = try Self.firstOfTwoTimedOut()
        // Told before the stream's end reaches the pool, so its slot is not leased here again.
        #expect(connection.events.all.suffix(2) == ["unanswered", "ended 1"])
        let ping = try #require(try connection.written().first { $0.kind == .ping })
        #expect(!ping.flags.contains(.ack))
        try connection.serverSends(.ping, flags: .ack, stream: 0, ping.payload)
        #expect(connection.events.all.last == "answered")
        // The next timeout asks again, once.
        connection.channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        #expect(Self.outcome(patient) == "timeout")
        #expect(connection.events.all.filter { $0 == "unanswered" }.count == 2)
        #expect(connection.channel.isActive)
    }

    @Test("a connection that does not answer the PING after a timeout is closed: what it carries is lost, the pool hears it is unresponsive")
    func unansweredRequestSilentPeer() throws {
        let (connection, patient) = try Self.firstOfTwoTimedOut()
        connection.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1_100))
        #expect(Self.outcome(patient) == "lost")
        #expect(connection.events.all.contains("unresponsive"))
        #expect(!connection.events.all.contains("answered"))
        #expect(!connection.channel.isActive)
    }

    @Test("DATA beyond the receive window the client advertised is a FLOW_CONTROL_ERROR")
    func receiveWindowViolation() throws {
        let connection = try Connection()
        try connection.ready()
        let request = connection.send()
        _ = try connection.written()
        // 1 MiB on stream 1 in 16 KiB frames, one byte more than the stream's window.
        for _ in 0..<64 {
            try connection.serverSends(.data, stream: 1, ByteBuffer(repeating: 0, count: 16_384))
        }
        #expect(connection.channel.isActive)
        try connection.serverSends(.data, stream: 1, ByteBuffer(repeating: 0, count: 1))
        #expect(Self.outcome(request) == "lost")
        let goAway = try #require(try connection.written().first { $0.kind == .goAway })
        #expect(goAway.payload.getInteger(at: goAway.payload.readerIndex + 4, as: UInt32.self) == 0x3)
    }
}
