import HTTP2Frames
import NIOCore
import NIOHPACK
import NIOHTTP2
import Testing

@testable import APNs

/// The HTTP/2 rules of an APNs connection, without a channel: frames in, actions and frames out.
/// Requests are plain numbers; the server's header blocks come from NIOHPACK's encoder and the
/// client's are read with its decoder, so each side is checked by an independent implementation.
@Suite("APNs connection state machine (HTTP/2 without I/O)")
struct APNsConnectionStateMachineTests {
    typealias Machine = APNsConnectionStateMachine<Int>

    /// The state machine and the server's side of the bytes. A class, so that `#expect` may
    /// call its methods (the macro cannot call a mutating method on a value).
    final class Connection {
        var machine = Machine()
        var now = NIODeadline.uptimeNanoseconds(1_000_000_000)
        private var client = ClientFrames()
        private var encoder = HPACKEncoder(allocator: ByteBufferAllocator())

        /// A connection after the preface and the server's first SETTINGS.
        static func ready(_ settings: [(HTTP2SettingID, UInt32)] = []) throws -> Connection {
            let connection = Connection()
            #expect(connection.writePreface())
            _ = try connection.written()
            let actions = try connection.serverSettings(settings)
            #expect(actions.count == 1)
            _ = try connection.written()  // the SETTINGS ACK
            return connection
        }

        func writePreface() -> Bool { machine.writePreface() }
        func ping() -> Bool { machine.ping() }
        func closeIfDrained() -> Bool { machine.closeIfDrained() }
        func expire(after delay: TimeAmount) -> [Int] { machine.expire(now: now + delay) }
        func close(error: HTTP2ConnectionError?) -> [Int]? { machine.close(error: error) }

        /// The frames the client wrote since the last call (without the preface's magic).
        func written() throws -> [HTTP2WireFrame] {
            if let bytes = machine.takeOutbound() { client.append(bytes) }
            return try client.frames()
        }

        func requestHeaders(_ frame: HTTP2WireFrame) throws -> HPACKHeaders {
            try client.headers(frame)
        }

        func send(_ request: Int, payload: ByteBuffer = ByteBuffer(string: #"{"aps":{}}"#), timeout: TimeAmount = .seconds(10))
            -> Machine.SendResult
        {
            var headers = HPACKHeaders()
            headers.add(name: ":method", value: "POST")
            headers.add(name: ":path", value: "/3/device/\(request)", indexing: .nonIndexable)
            return machine.send(headers: headers, payload: payload, timeout: timeout, now: now, request: request)
        }

        /// Feeds the server's frame; returns every action it calls for.
        func server(_ type: HTTP2WireFrame.Kind, flags: HTTP2WireFrame.Flags = [], stream: UInt32, _ payload: ByteBuffer = ByteBuffer())
            throws(HTTP2ConnectionError) -> [Machine.Action]
        {
            var bytes = ByteBuffer()
            bytes.writeHTTP2Frame(type: type, flags: flags, streamID: stream, payload: payload)
            machine.read(bytes)
            var actions: [Machine.Action] = []
            while let action = try machine.nextAction() { actions.append(action) }
            return actions
        }

        func serverSettings(_ settings: [(HTTP2SettingID, UInt32)]) throws(HTTP2ConnectionError) -> [Machine.Action] {
            var payload = ByteBuffer()
            for (id, value) in settings {
                payload.writeInteger(id.rawValue)
                payload.writeInteger(value)
            }
            return try server(.settings, stream: 0, payload)
        }

        func answer(
            _ stream: UInt32, status: Int = 200, apnsID: String = "A", retryAfter: String? = nil, endStream: Bool = true
        ) throws -> [Machine.Action] {
            var block = ByteBuffer()
            var headers: HPACKHeaders = [":status": "\(status)", "apns-id": apnsID]
            if let retryAfter { headers.add(name: "retry-after", value: retryAfter) }
            try encoder.encode(headers: headers, to: &block)
            return try server(.headers, flags: endStream ? [.endHeaders, .endStream] : .endHeaders, stream: stream, block)
        }

        func windowUpdate(_ stream: UInt32, _ increment: UInt32) throws(HTTP2ConnectionError) -> [Machine.Action] {
            var payload = ByteBuffer()
            payload.writeInteger(increment)
            return try server(.windowUpdate, stream: stream, payload)
        }
    }

    /// A comparable summary of actions.
    static func describe(_ actions: [Machine.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .answer(let request, let outcome): "\(request): \(describe(outcome))"
            case .ready(let maxStreams, let window): "ready \(maxStreams) window \(window)"
            case .windowGrew(let window): "window \(window)"
            case .maxStreamsChanged(let maxStreams): "maxStreams \(maxStreams)"
            case .goingAway(let code, let reason, let refused): "goAway \(code) \(reason ?? "-") refused \(refused)"
            case .pingAcknowledged: "ping acknowledged"
            }
        }
    }

    static func describe(_ outcome: APNsStreamOutcome) -> String {
        switch outcome {
        case .response(let status, let headers, let body):
            "\(status) \(headers.apnsID ?? "-") \(body.map { String(buffer: $0) } ?? "-")" + (headers.retryAfter.map { " retry-after \($0)" } ?? "")
        case .refused: "refused"
        case .connectionLost(let error): "lost (\(error))"
        case .timedOut: "timeout"
        }
    }

    static func settings(_ frame: HTTP2WireFrame) throws -> [UInt16: UInt32] {
        Dictionary(try frame.settingsParameters().map { ($0.id, $0.value) }) { $1 }
    }

    static func integer(_ frame: HTTP2WireFrame, at offset: Int = 0) -> UInt32? {
        frame.payload.getInteger(at: frame.payload.readerIndex + offset, as: UInt32.self)
    }

    @Test("the preface: the magic, SETTINGS (no pushes, no streams from the server, 1 MiB windows), the connection window to 1 MiB; once")
    func preface() throws {
        var machine = Machine()
        let wrote = machine.writePreface()
        #expect(wrote)
        let outbound = machine.takeOutbound()
        var bytes = try #require(outbound)
        let magic = bytes.readString(length: 24)
        #expect(magic == ClientFrames.magic)
        var reader = HTTP2FrameReader()
        reader.append(bytes)
        let settings = try #require(try reader.next())
        #expect(settings.kind == .settings && settings.flags.isEmpty && settings.streamID == 0)
        #expect(try Self.settings(settings) == [0x3: 0, 0x4: 1 << 20, 0x2: 0])
        let window = try #require(try reader.next())
        #expect(window.kind == .windowUpdate && window.streamID == 0 && Self.integer(window) == UInt32((1 << 20) - 65_535))
        let wroteAgain = machine.writePreface()
        #expect(!wroteAgain)
        let more = machine.takeOutbound()
        #expect(more == nil)
    }

    @Test("ready at the first SETTINGS (unlimited when it names no limit), which is acknowledged; later changes of the limit are reported")
    func settingsAndStreamLimit() throws {
        let connection = Connection()
        _ = connection.writePreface()
        _ = try connection.written()
        #expect(Self.describe(try connection.serverSettings([])) == ["ready 2147483647 window 65535"])
        #expect(try connection.written().map { "\($0.kind!) \($0.flags.contains(.ack))" } == ["settings true"])
        #expect(Self.describe(try connection.serverSettings([(.maxConcurrentStreams, 2)])) == ["maxStreams 2"])
        #expect(Self.describe(try connection.serverSettings([(.maxConcurrentStreams, 2), (.headerTableSize, 0)])).isEmpty)
        #expect(Self.describe(try connection.server(.settings, flags: .ack, stream: 0)).isEmpty)
        #expect(connection.machine.maxStreams == 2)
    }

    @Test("ready carries the connection window granted so far; a window raised after it is reported once, a window topped up is not")
    func readyCarriesTheWindow() throws {
        let connection = Connection()
        _ = connection.writePreface()
        _ = try connection.written()
        // SETTINGS and a WINDOW_UPDATE in one read, as a server's preface comes.
        var bytes = ByteBuffer()
        var settings = ByteBuffer()
        settings.writeInteger(HTTP2SettingID.maxConcurrentStreams.rawValue)
        settings.writeInteger(UInt32(1))
        bytes.writeHTTP2Frame(type: .settings, streamID: 0, payload: settings)
        var increment = ByteBuffer()
        increment.writeInteger(UInt32(100_000))
        bytes.writeHTTP2Frame(type: .windowUpdate, streamID: 0, payload: increment)
        connection.machine.read(bytes)
        var actions: [Machine.Action] = []
        while let action = try connection.machine.nextAction() { actions.append(action) }
        #expect(Self.describe(actions) == ["ready 1 window 65535", "window 165535"])
        #expect(Self.describe(try connection.server(.windowUpdate, stream: 0, increment)) == ["window 265535"])
        #expect(Self.describe(try connection.serverSettings([(.maxConcurrentStreams, 1000)])) == ["maxStreams 1000"])
    }

    @Test("requests open odd streams in order; beyond the server's limit, after GOAWAY or with no time left they do not leave")
    func sendDecisions() throws {
        let connection = try Connection.ready([(.maxConcurrentStreams, 2)])
        #expect(connection.send(1) == .opened)
        #expect(connection.send(2) == .opened)
        #expect(connection.send(3) == .refused)
        #expect(connection.send(4, timeout: .zero) == .timedOut)
        let frames = try connection.written()
        #expect(frames.map(\.kind) == [.headers, .data, .headers, .data])
        #expect(frames.map(\.streamID) == [1, 1, 3, 3])
        #expect(try connection.requestHeaders(frames[0]).first(name: ":path") == "/3/device/1")
        #expect(frames[1].flags.contains(.endStream) && String(buffer: frames[1].payload) == #"{"aps":{}}"#)
        #expect(connection.machine.streamsInFlight == 2)

        #expect(Self.describe(try connection.answer(1)) == ["1: 200 A -"])
        #expect(connection.send(5) == .opened)
        #expect(try connection.written().map(\.streamID) == [5, 5])

        var goAway = ByteBuffer()
        goAway.writeInteger(UInt32(5))
        goAway.writeInteger(UInt32(0))
        _ = try connection.server(.goAway, stream: 0, goAway)
        #expect(connection.send(6) == .refused)
    }

    @Test("an answer: status and apns-id from the header block, the body from DATA; a stream ended without a status is lost")
    func answers() throws {
        let connection = try Connection.ready()
        #expect(connection.send(1) == .opened)
        #expect(connection.send(2) == .opened)
        _ = try connection.written()
        #expect(try connection.answer(1, status: 400, apnsID: "B", endStream: false).isEmpty)
        #expect(try connection.server(.data, stream: 1, ByteBuffer(string: #"{"reason":"#)).isEmpty)
        #expect(
            Self.describe(try connection.server(.data, flags: .endStream, stream: 1, ByteBuffer(string: #""BadDeviceToken"}"#)))
                == [#"1: 400 B {"reason":"BadDeviceToken"}"#])
        let lost = try connection.server(.data, flags: .endStream, stream: 3, ByteBuffer(string: "x"))
        #expect(Self.describe(lost).first?.hasPrefix("2: lost") == true)
        // A stream that ended may still receive what was on its way: read and dropped.
        #expect(try connection.answer(1).isEmpty)
        #expect(connection.machine.streamsInFlight == 0)
    }

    @Test("an answer's Retry-After header comes with its outcome, as sent")
    func retryAfter() throws {
        let connection = try Connection.ready()
        #expect(connection.send(1) == .opened)
        #expect(connection.send(2) == .opened)
        _ = try connection.written()
        #expect(Self.describe(try connection.answer(1, status: 429, apnsID: "B", retryAfter: "3")) == ["1: 429 B - retry-after 3"])
        #expect(Self.describe(try connection.answer(3, status: 503, apnsID: "C")) == ["2: 503 C -"])
    }

    @Test("a header block may continue in CONTINUATION frames; anything between them is a PROTOCOL_ERROR")
    func continuation() throws {
        let connection = try Connection.ready()
        _ = connection.send(1)
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var block = ByteBuffer()
        try encoder.encode(headers: [":status": "200", "apns-id": "C"], to: &block)
        #expect(try connection.server(.headers, flags: .endStream, stream: 1, block.readSlice(length: 2)!).isEmpty)
        #expect(Self.describe(try connection.server(.continuation, flags: .endHeaders, stream: 1, block)) == ["1: 200 C -"])

        _ = connection.send(2)
        #expect(try connection.server(.headers, stream: 3, ByteBuffer(bytes: [0x88])).isEmpty)
        #expect(throws: HTTP2ConnectionError.self) { try connection.server(.ping, stream: 0, ByteBuffer(repeating: 0, count: 8)) }
    }

    @Test("a request's header block larger than the server's frame size goes out in HEADERS + CONTINUATION")
    func largeHeaderBlock() throws {
        let connection = try Connection.ready()
        var headers = HPACKHeaders()
        headers.add(name: ":path", value: "/3/device/big", indexing: .nonIndexable)
        headers.add(name: "x-large", value: String(repeating: "v", count: 40_000), indexing: .nonIndexable)
        let result = connection.machine.send(
            headers: headers, payload: ByteBuffer(string: "{}"), timeout: .seconds(1), now: connection.now, request: 1)
        #expect(result == .opened)
        let frames = try connection.written()
        #expect(frames.map(\.kind) == [.headers, .continuation, .continuation, .data])
        #expect(frames.map { $0.flags.contains(.endHeaders) } == [false, false, true, false])
        #expect(frames.dropLast().allSatisfy { $0.payload.readableBytes <= HTTP2WireFrame.defaultMaxFrameSize })
        var block = ByteBuffer()
        for frame in frames.dropLast() { block.writeImmutableBuffer(frame.payload) }
        var decoder = HPACKDecoder(
            allocator: ByteBufferAllocator(), maxDynamicTableSize: HPACKDecoder.maxDynamicTableSize, maxHeaderListSize: 1 << 20)
        let decoded = try decoder.decodeHeaders(from: &block)
        #expect(decoded.first(name: "x-large")?.count == 40_000)
    }

    @Test("DATA waits for the stream's and the connection's send windows, in the order it was sent")
    func sendWindows() throws {
        let connection = try Connection.ready([(.initialWindowSize, 10)])
        #expect(connection.send(1, payload: ByteBuffer(repeating: 1, count: 25)) == .opened)
        #expect(connection.send(2, payload: ByteBuffer(repeating: 2, count: 5)) == .opened)
        var frames = try connection.written()
        // Stream 1 sends its first 10 bytes; stream 3's DATA waits behind stream 1's rest.
        #expect(frames.map { "\($0.kind!) \($0.streamID)" } == ["headers 1", "data 1", "headers 3"])
        #expect(frames[1].payload.readableBytes == 10 && !frames[1].flags.contains(.endStream))
        _ = try connection.windowUpdate(1, 10)
        frames = try connection.written()
        #expect(frames.map { "\($0.streamID) \($0.payload.readableBytes) \($0.flags.contains(.endStream))" } == ["1 10 false", "3 5 true"])
        // The server raises every stream's window: the rest of stream 1 leaves after the ACK.
        _ = try connection.serverSettings([(.initialWindowSize, 1_000)])
        frames = try connection.written()
        #expect(frames.map { "\($0.kind!) \($0.streamID) \($0.payload.readableBytes)" } == ["settings 0 0", "data 1 5"])
        #expect(frames.last?.flags.contains(.endStream) == true)
    }

    @Test("the connection's send window bounds every stream; a WINDOW_UPDATE on stream 0 releases it; frames are at most 16 KiB")
    func connectionWindow() throws {
        let connection = try Connection.ready([(.initialWindowSize, 1 << 20)])
        _ = connection.send(1, payload: ByteBuffer(repeating: 1, count: 70_000))
        var frames = try connection.written()
        #expect(frames.dropFirst().map { $0.payload.readableBytes } == [16_384, 16_384, 16_384, 16_383])
        _ = try connection.windowUpdate(0, 100_000)
        frames = try connection.written()
        #expect(frames.map { $0.payload.readableBytes } == [70_000 - 65_535])
        #expect(frames.last?.flags.contains(.endStream) == true)
        #expect(throws: HTTP2ConnectionError.self) { try connection.windowUpdate(0, 0) }
    }

    @Test("the receive window: a WINDOW_UPDATE once half of the connection's 1 MiB is used; DATA beyond a window is a FLOW_CONTROL_ERROR")
    func receiveWindows() throws {
        let connection = try Connection.ready()
        _ = connection.send(1)
        _ = try connection.written()
        for _ in 0..<31 { _ = try connection.server(.data, stream: 1, ByteBuffer(repeating: 0, count: 16_384)) }
        #expect(try connection.written().isEmpty)
        _ = try connection.server(.data, stream: 1, ByteBuffer(repeating: 0, count: 16_384))
        let update = try #require(try connection.written().first)
        #expect(update.kind == .windowUpdate && update.streamID == 0 && Self.integer(update) == UInt32(32 * 16_384))
        for _ in 0..<32 { _ = try connection.server(.data, stream: 1, ByteBuffer(repeating: 0, count: 16_384)) }
        do {
            _ = try connection.server(.data, stream: 1, ByteBuffer(repeating: 0, count: 1))
            Issue.record("a byte beyond the stream's window was accepted")
        } catch {
            #expect(error.code == .flowControlError)
        }
    }

    @Test("GOAWAY: streams above its last stream id are refused, the pool is told, and the connection closes once the rest are answered")
    func goAway() throws {
        let connection = try Connection.ready()
        for request in 1...3 { _ = connection.send(request) }
        var payload = ByteBuffer()
        payload.writeInteger(UInt32(3))
        payload.writeInteger(UInt32(0))
        payload.writeString(#"{"reason":"Shutdown"}"#)
        let actions = try connection.server(.goAway, stream: 0, payload)
        #expect(Self.describe(actions) == ["goAway \(HTTP2ErrorCode.noError) Shutdown refused [3]"])
        #expect(!connection.closeIfDrained())
        #expect(Self.describe(try connection.answer(1)) == ["1: 200 A -"])
        #expect(!connection.closeIfDrained())
        #expect(Self.describe(try connection.answer(3)) == ["2: 200 A -"])
        #expect(connection.closeIfDrained())
        #expect(connection.machine.isClosing)
        #expect(!connection.closeIfDrained())
    }

    @Test("GOAWAY debug data: APNs's reason is read, anything else is ignored")
    func goAwayReason() {
        #expect(Machine.reason(inDebugData: ByteBuffer(string: #"{"reason":"IdleTimeout"}"#)) == "IdleTimeout")
        #expect(Machine.reason(inDebugData: ByteBuffer(string: "shutting down")) == nil)
        #expect(Machine.reason(inDebugData: ByteBuffer()) == nil)
    }

    @Test("PING: the server's is acknowledged with its data; ours goes out once until acknowledged")
    func ping() throws {
        let connection = try Connection.ready()
        #expect(try connection.server(.ping, stream: 0, ByteBuffer(bytes: [1, 2, 3, 4, 5, 6, 7, 8])).isEmpty)
        let ack = try #require(try connection.written().first)
        #expect(ack.kind == .ping && ack.flags.contains(.ack) && Array(ack.payload.readableBytesView) == [1, 2, 3, 4, 5, 6, 7, 8])

        #expect(try connection.server(.ping, flags: .ack, stream: 0, ByteBuffer(repeating: 0, count: 8)).isEmpty)  // none outstanding
        #expect(connection.ping())
        #expect(!connection.ping())
        #expect(try connection.written().map { "\($0.kind!) \($0.flags.contains(.ack))" } == ["ping false"])
        #expect(Self.describe(try connection.server(.ping, flags: .ack, stream: 0, ByteBuffer(repeating: 0, count: 8))) == ["ping acknowledged"])
        #expect(connection.ping())
        #expect(throws: HTTP2ConnectionError.self) { try connection.server(.ping, stream: 0, ByteBuffer(repeating: 0, count: 7)) }
    }

    @Test("RST_STREAM REFUSED_STREAM is a refusal, any other code a loss")
    func resets() throws {
        let connection = try Connection.ready()
        _ = connection.send(1)
        _ = connection.send(2)
        var code = ByteBuffer()
        code.writeInteger(HTTP2WireErrorCode.refusedStream.rawValue)
        #expect(Self.describe(try connection.server(.rstStream, stream: 1, code)) == ["1: refused"])
        code.clear()
        code.writeInteger(HTTP2WireErrorCode.protocolError.rawValue)
        #expect(Self.describe(try connection.server(.rstStream, stream: 3, code)).first?.hasPrefix("2: lost") == true)
    }

    @Test("requests past their deadline expire: their streams are cancelled (RST_STREAM CANCEL)")
    func expiry() throws {
        let connection = try Connection.ready()
        _ = connection.send(1, timeout: .milliseconds(100))
        _ = connection.send(2, timeout: .milliseconds(300))
        _ = try connection.written()
        #expect(connection.expire(after: .milliseconds(99)).isEmpty)
        #expect(connection.expire(after: .milliseconds(100)) == [1])
        let reset = try #require(try connection.written().first)
        #expect(reset.kind == .rstStream && reset.streamID == 1 && Self.integer(reset) == HTTP2WireErrorCode.cancel.rawValue)
        #expect(connection.machine.streamsInFlight == 1)
        #expect(try connection.answer(1).isEmpty)  // the late answer is dropped
        #expect(connection.expire(after: .seconds(1)) == [2])
    }

    @Test("closing: a protocol error is told with a GOAWAY carrying its code; the requests in flight are returned once; nothing more is read")
    func close() throws {
        let connection = try Connection.ready()
        _ = connection.send(1)
        _ = connection.send(2)
        _ = try connection.written()
        let inFlight = try #require(connection.close(error: HTTP2ConnectionError(code: .compressionError, message: "test")))
        #expect(inFlight.sorted() == [1, 2])
        let goAway = try #require(try connection.written().first)
        #expect(goAway.kind == .goAway && Self.integer(goAway, at: 4) == HTTP2WireErrorCode.compressionError.rawValue)
        #expect(connection.close(error: nil) == nil)
        #expect(connection.send(3) == .refused)
        #expect(try connection.answer(1).isEmpty)
        #expect(connection.machine.streamsInFlight == 0)
    }

    @Test(
        "frames that break the protocol are connection errors with their code",
        arguments: [
            (HTTP2WireFrame.Kind.data, UInt32(0), [UInt8](), HTTP2WireErrorCode.protocolError),
            (.headers, 0, [0x88], .protocolError),
            (.pushPromise, 1, [0, 0, 0, 2], .protocolError),
            (.settings, 1, [], .protocolError),
            (.settings, 0, [0, 4, 0x80, 0, 0, 0], .flowControlError),
            (.settings, 0, [0, 5, 0, 0, 0x10, 0], .protocolError),
            (.settings, 0, [0, 3, 0], .frameSizeError),
            (.rstStream, 0, [0, 0, 0, 8], .protocolError),
            (.goAway, 0, [0, 0, 0], .frameSizeError),
            (.windowUpdate, 0, [0, 0], .frameSizeError),
            (.continuation, 1, [0x88], .protocolError),
            (.headers, 1, [0xff, 0xff, 0xff, 0xff, 0xff, 0xff], .compressionError),
        ])
    func protocolErrors(kind: HTTP2WireFrame.Kind, stream: UInt32, payload: [UInt8], code: HTTP2WireErrorCode) throws {
        let connection = try Connection.ready()
        _ = connection.send(1)
        do {
            _ = try connection.server(kind, flags: kind == .headers ? .endHeaders : [], stream: stream, ByteBuffer(bytes: payload))
            Issue.record("\(kind) on stream \(stream) was accepted")
        } catch {
            #expect(error.code == code, "\(error)")
        }
    }
}
