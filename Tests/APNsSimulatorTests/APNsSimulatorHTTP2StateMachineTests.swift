import HTTP2Frames
import NIOCore
import NIOHPACK
import Testing

@testable import APNsSimulator

/// The simulator's server side of HTTP/2, without a channel: a client's bytes in, actions and
/// the server's frames out. The client's header blocks come from NIOHPACK's encoder and the
/// server's answers are read with NIOHPACK's decoder: each side is checked by an independent
/// implementation.
@Suite("Simulator HTTP/2 state machine (server side without I/O)")
struct APNsSimulatorHTTP2StateMachineTests {
    typealias Machine = APNsSimulatorHTTP2StateMachine

    /// The state machine and a client's side of the bytes.
    final class Connection {
        var machine: Machine
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var decoder = HPACKDecoder(allocator: ByteBufferAllocator())
        private var reader = HTTP2FrameReader()

        init(maxConcurrentStreams: Int = 100, profile: APNsSimulatorHTTP2Profile = .generous, preface: Bool = true) throws {
            machine = Machine(maxConcurrentStreams: maxConcurrentStreams, profile: profile)
            machine.writePreface()
            if preface {
                machine.read(ByteBuffer(string: HTTP2WireFrame.connectionPreface))
                _ = try client(.settings, stream: 0)
                _ = try client(.settings, flags: .ack, stream: 0)
            }
        }

        /// Feeds the client's frame; returns every action it calls for.
        func client(_ type: HTTP2WireFrame.Kind, flags: HTTP2WireFrame.Flags = [], stream: UInt32, _ payload: ByteBuffer = ByteBuffer())
            throws(HTTP2ConnectionError) -> [Machine.Action]
        {
            var bytes = ByteBuffer()
            bytes.writeHTTP2Frame(type: type, flags: flags, streamID: stream, payload: payload)
            return try feed(bytes)
        }

        func feed(_ bytes: ByteBuffer) throws(HTTP2ConnectionError) -> [Machine.Action] {
            machine.read(bytes)
            var actions: [Machine.Action] = []
            while let action = try machine.nextAction() { actions.append(action) }
            return actions
        }

        /// A request's header block, encoded the way `indexing` says.
        func headerBlock(path: String = "/3/device/abcd", indexing: HPACKIndexing = .indexable) throws -> ByteBuffer {
            var headers = HPACKHeaders()
            headers.add(name: ":method", value: "POST", indexing: indexing)
            headers.add(name: ":scheme", value: "https", indexing: indexing)
            headers.add(name: ":path", value: path, indexing: indexing)
            headers.add(name: "apns-topic", value: "com.example.app", indexing: indexing)
            var block = ByteBuffer()
            try encoder.encode(headers: headers, to: &block)
            return block
        }

        /// HEADERS then DATA with END_STREAM.
        func request(_ stream: UInt32, body: String = #"{"aps":{}}"#) throws -> [Machine.Action] {
            try client(.headers, flags: .endHeaders, stream: stream, try headerBlock())
                + client(.data, flags: .endStream, stream: stream, ByteBuffer(string: body))
        }

        /// The server's frames since the last call.
        func written() throws -> [HTTP2WireFrame] {
            if let bytes = machine.takeOutbound() { reader.append(bytes) }
            var frames: [HTTP2WireFrame] = []
            while let frame = try reader.next() { frames.append(frame) }
            return frames
        }

        func answerHeaders(_ frame: HTTP2WireFrame) throws -> HPACKHeaders {
            var block = frame.payload
            return try decoder.decodeHeaders(from: &block)
        }

        func respond(_ stream: UInt32, status: Int = 200, body: String? = nil) -> Bool {
            machine.respond(streamID: stream, status: status, apnsID: "A-\(stream)", body: body.map { ByteBuffer(string: $0) })
        }
    }

    static func describe(_ actions: [Machine.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .request(let stream, let headers, let body): "request \(stream) \(headers.first(name: ":path") ?? "-") \(String(buffer: body))"
            case .streamOpened(let stream): "opened \(stream)"
            case .streamClosed(let stream): "closed \(stream)"
            case .ping: "ping"
            }
        }
    }

    static func settings(_ frame: HTTP2WireFrame) throws -> [UInt16: UInt32] {
        Dictionary(try frame.settingsParameters().map { ($0.id, $0.value) }) { $1 }
    }

    @Test(
        "the server's preface: SETTINGS (stream limit, header list size, 1 MiB windows) and the connection window to 1 MiB; the client's SETTINGS acknowledged"
    )
    func preface() throws {
        let connection = try Connection(maxConcurrentStreams: 7, preface: false)
        var frames = try connection.written()
        #expect(frames.map(\.kind) == [.settings, .windowUpdate])
        #expect(try Self.settings(frames[0]) == [0x3: 7, 0x6: 8192, 0x4: 1 << 20])
        #expect(frames[1].payload.getInteger(at: frames[1].payload.readerIndex, as: UInt32.self) == UInt32((1 << 20) - 65_535))
        // Nothing is read before the client's preface is whole.
        connection.machine.read(ByteBuffer(string: String(HTTP2WireFrame.connectionPreface.prefix(10))))
        #expect(try connection.machine.nextAction() == nil)
        connection.machine.read(ByteBuffer(string: String(HTTP2WireFrame.connectionPreface.dropFirst(10))))
        #expect(try connection.client(.settings, stream: 0).isEmpty)
        frames = try connection.written()
        #expect(frames.map(\.kind) == [.settings] && frames[0].flags.contains(.ack))
    }

    @Test(
        "Apple's preface: HEADER_TABLE_SIZE 4096, the stream limit, INITIAL_WINDOW_SIZE 65535, MAX_FRAME_SIZE 16384, MAX_HEADER_LIST_SIZE 8000, and no window raised"
    )
    func applePreface() throws {
        let connection = try Connection(maxConcurrentStreams: 1, profile: .apple, preface: false)
        let frames = try connection.written()
        #expect(frames.map(\.kind) == [.settings])
        #expect(try frames[0].settingsParameters().map(\.id) == [0x1, 0x3, 0x4, 0x5, 0x6])
        #expect(try Self.settings(frames[0]) == [0x1: 4_096, 0x3: 1, 0x4: 65_535, 0x5: 16_384, 0x6: 8_000])
    }

    @Test("Apple's connection window is replenished only as DATA is read, in increments of about 32 KB")
    func appleConnectionWindow() throws {
        let connection = try Connection(profile: .apple)
        _ = try connection.written()
        let body = String(repeating: "x", count: 4_000)
        // 8 requests of 4,000 bytes: 32,000 read, the window still above half: no update yet.
        for stream in stride(from: UInt32(1), through: 15, by: 2) { _ = try connection.request(stream, body: body) }
        #expect(try connection.written().filter { $0.kind == .windowUpdate }.isEmpty)
        // The 9th crosses half the window: the server tops it up by what was read, 36,000 bytes.
        _ = try connection.request(17, body: body)
        let updates = try connection.written().filter { $0.kind == .windowUpdate }
        #expect(updates.map(\.streamID) == [0])
        #expect(updates.first.flatMap { $0.payload.getInteger(at: $0.payload.readerIndex, as: UInt32.self) } == 36_000)
    }

    @Test("a wrong connection preface is a PROTOCOL_ERROR")
    func wrongPreface() throws {
        let connection = try Connection(preface: false)
        do {
            _ = try connection.feed(ByteBuffer(string: "GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
            Issue.record("an HTTP/1.1 request was read as HTTP/2")
        } catch {
            #expect(error.code == .protocolError)
        }
    }

    @Test("a request: its stream opens with its HEADERS and is complete with END_STREAM; the answer is :status and apns-id")
    func request() throws {
        let connection = try Connection()
        _ = try connection.written()
        #expect(Self.describe(try connection.request(1)) == ["opened 1", #"request 1 /3/device/abcd {"aps":{}}"#])
        #expect(connection.machine.openStreams == 1)
        #expect(connection.respond(1))
        let frames = try connection.written()
        #expect(frames.map(\.kind) == [.headers])
        #expect(frames[0].flags.contains(.endStream) && frames[0].flags.contains(.endHeaders))
        let headers = try connection.answerHeaders(frames[0])
        #expect(headers.first(name: ":status") == "200" && headers.first(name: "apns-id") == "A-1")
        #expect(connection.machine.openStreams == 0)
        #expect(!connection.respond(1), "a stream is answered once")
    }

    @Test("a request without a body is complete in its HEADERS")
    func headersOnly() throws {
        let connection = try Connection()
        let actions = try connection.client(.headers, flags: [.endHeaders, .endStream], stream: 1, try connection.headerBlock())
        #expect(Self.describe(actions) == ["opened 1", "request 1 /3/device/abcd "])
    }

    @Test("an error answer: :status, apns-id, content-type, then the JSON reason in DATA; statuses outside the static table are literals")
    func errorAnswer() throws {
        let connection = try Connection()
        _ = try connection.request(1)
        _ = try connection.request(3)
        _ = try connection.written()
        #expect(connection.respond(1, status: 400, body: #"{"reason":"BadDeviceToken"}"#))
        #expect(connection.respond(3, status: 410, body: #"{"reason":"Unregistered","timestamp":1}"#))
        let frames = try connection.written()
        #expect(frames.map(\.kind) == [.headers, .data, .headers, .data])
        #expect(!frames[0].flags.contains(.endStream) && frames[1].flags.contains(.endStream))
        let first = try connection.answerHeaders(frames[0])
        #expect(first.first(name: ":status") == "400" && first.first(name: "content-type") == "application/json")
        #expect(String(buffer: frames[1].payload) == #"{"reason":"BadDeviceToken"}"#)
        #expect(try connection.answerHeaders(frames[2]).first(name: ":status") == "410")
        #expect(connection.machine.openStreams == 0)
    }

    @Test("streams beyond the acknowledged limit are refused with RST_STREAM REFUSED_STREAM; a raised limit lets more in once acknowledged")
    func streamLimit() throws {
        let connection = try Connection(maxConcurrentStreams: 1)
        _ = try connection.written()
        #expect(Self.describe(try connection.request(1)).count == 2)
        #expect(try connection.request(3).isEmpty)
        let reset = try #require(try connection.written().first)
        #expect(reset.kind == .rstStream && reset.streamID == 3)
        #expect(reset.payload.getInteger(at: reset.payload.readerIndex, as: UInt32.self) == HTTP2WireErrorCode.refusedStream.rawValue)
        connection.machine.setMaxConcurrentStreams(10)
        let settings = try #require(try connection.written().first)
        #expect(try Self.settings(settings) == [0x3: 10])
        _ = try connection.client(.settings, flags: .ack, stream: 0)
        #expect(Self.describe(try connection.request(5)).count == 2)
        #expect(connection.machine.openStreams == 2)
    }

    @Test("a client that opened streams before it read the server's first SETTINGS broke no limit: it applies once acknowledged")
    func limitAppliesOnceAcknowledged() throws {
        let connection = try Connection(maxConcurrentStreams: 1, preface: false)
        connection.machine.read(ByteBuffer(string: HTTP2WireFrame.connectionPreface))
        _ = try connection.client(.settings, stream: 0)
        for stream in [UInt32(1), 3, 5] {
            #expect(Self.describe(try connection.request(stream)).count == 2, "stream \(stream)")
        }
        _ = try connection.client(.settings, flags: .ack, stream: 0)
        #expect(try connection.request(7).isEmpty)
        #expect(try connection.written().contains { $0.kind == .rstStream && $0.streamID == 7 })
        #expect(connection.machine.openStreams == 3)
    }

    @Test("after GOAWAY, streams above its last stream id are not processed")
    func goAway() throws {
        let connection = try Connection()
        _ = try connection.request(1)
        _ = try connection.written()
        connection.machine.goAway(lastStreamID: 1, errorCode: .noError, reason: "Shutdown")
        let frame = try #require(try connection.written().first)
        #expect(frame.kind == .goAway)
        var payload = frame.payload
        #expect(payload.readInteger(as: UInt32.self) == 1 && payload.readInteger(as: UInt32.self) == 0)
        #expect(payload.readString(length: payload.readableBytes) == #"{"reason":"Shutdown"}"#)
        #expect(try connection.request(3).isEmpty)
        #expect(connection.respond(1))
    }

    @Test("a client's RST_STREAM closes its stream; a late answer is dropped")
    func clientReset() throws {
        let connection = try Connection()
        _ = try connection.request(1)
        var code = ByteBuffer()
        code.writeInteger(HTTP2WireErrorCode.cancel.rawValue)
        #expect(Self.describe(try connection.client(.rstStream, stream: 1, code)) == ["closed 1"])
        #expect(!connection.respond(1))
        #expect(try connection.client(.rstStream, stream: 1, code).isEmpty)
    }

    @Test("PING is acknowledged with its data and reported")
    func ping() throws {
        let connection = try Connection()
        _ = try connection.written()
        #expect(Self.describe(try connection.client(.ping, stream: 0, ByteBuffer(bytes: [1, 2, 3, 4, 5, 6, 7, 8]))) == ["ping"])
        let ack = try #require(try connection.written().first)
        #expect(ack.kind == .ping && ack.flags.contains(.ack) && Array(ack.payload.readableBytesView) == [1, 2, 3, 4, 5, 6, 7, 8])
    }

    @Test("an answer's DATA waits for the client's send windows")
    func sendWindows() throws {
        let connection = try Connection()
        var settings = ByteBuffer()
        settings.writeInteger(HTTP2SettingID.initialWindowSize.rawValue)
        settings.writeInteger(UInt32(10))
        _ = try connection.client(.settings, stream: 0, settings)
        _ = try connection.request(1)
        _ = try connection.written()
        #expect(connection.respond(1, status: 400, body: #"{"reason":"BadDeviceToken"}"#))
        var frames = try connection.written()
        #expect(frames.map(\.kind) == [.headers, .data])
        #expect(frames[1].payload.readableBytes == 10 && !frames[1].flags.contains(.endStream))
        #expect(connection.machine.openStreams == 1)
        var increment = ByteBuffer()
        increment.writeInteger(UInt32(100))
        _ = try connection.client(.windowUpdate, stream: 1, increment)
        frames = try connection.written()
        #expect(frames.map { $0.payload.readableBytes } == [17] && frames[0].flags.contains(.endStream))
        #expect(connection.machine.openStreams == 0)
    }

    @Test("request bodies: the connection window is topped up once half of 1 MiB is used; DATA beyond a stream's window is a FLOW_CONTROL_ERROR")
    func receiveWindows() throws {
        let connection = try Connection()
        _ = try connection.client(.headers, flags: .endHeaders, stream: 1, try connection.headerBlock())
        _ = try connection.written()
        for _ in 0..<32 { _ = try connection.client(.data, stream: 1, ByteBuffer(repeating: 0x20, count: 16_384)) }
        let update = try #require(try connection.written().first)
        #expect(update.kind == .windowUpdate && update.streamID == 0)
        for _ in 0..<32 { _ = try connection.client(.data, stream: 1, ByteBuffer(repeating: 0x20, count: 16_384)) }
        do {
            _ = try connection.client(.data, stream: 1, ByteBuffer(repeating: 0x20, count: 1))
            Issue.record("DATA beyond the stream's window was accepted")
        } catch {
            #expect(error.code == .flowControlError)
        }
    }

    @Test("a header block may continue in CONTINUATION frames; anything between them is a PROTOCOL_ERROR")
    func continuation() throws {
        let connection = try Connection()
        var block = try connection.headerBlock()
        let head = block.readSlice(length: 5)!
        #expect(try connection.client(.headers, stream: 1, head).isEmpty)
        #expect(Self.describe(try connection.client(.continuation, flags: .endHeaders, stream: 1, block)) == ["opened 1"])
        let second = try connection.headerBlock(path: "/3/device/ef")
        _ = try connection.client(.headers, stream: 3, second.getSlice(at: second.readerIndex, length: 1)!)
        #expect(throws: HTTP2ConnectionError.self) { try connection.client(.ping, stream: 0, ByteBuffer(repeating: 0, count: 8)) }
    }

    @Test("the same header block sent again is read from the last decoding only while it leaves the table as it was")
    func repeatedBlocks() throws {
        let connection = try Connection()
        // Indexable headers enter the table on the first block: the second, all indexed, is stateless.
        _ = try connection.request(1)
        let indexed = try connection.headerBlock()
        #expect(Machine.leavesTableAsItWas(indexed))
        for stream in stride(from: UInt32(3), through: 7, by: 2) {
            let actions = try connection.client(.headers, flags: [.endHeaders, .endStream], stream: stream, indexed)
            #expect(Self.describe(actions) == ["opened \(stream)", "request \(stream) /3/device/abcd "])
        }
        #expect(!Machine.leavesTableAsItWas(try Connection().headerBlock(path: "/3/device/new")))
        #expect(Machine.leavesTableAsItWas(try Connection().headerBlock(indexing: .nonIndexable)))
        #expect(Machine.leavesTableAsItWas(try Connection().headerBlock(indexing: .neverIndexed)))
        #expect(!Machine.leavesTableAsItWas(ByteBuffer(bytes: [0x3f, 0xe1, 0x1f])), "a table size update changes the table")
        #expect(!Machine.leavesTableAsItWas(ByteBuffer(bytes: [0x00, 0x05, 0x61])), "a truncated literal is not trusted")
    }

    @Test(
        "frames that break the protocol are connection errors with their code",
        arguments: [
            (HTTP2WireFrame.Kind.data, UInt32(0), [UInt8](), HTTP2WireErrorCode.protocolError),
            (.headers, 0, [0x82], .protocolError),
            (.headers, 2, [0x82], .protocolError),
            (.pushPromise, 1, [0, 0, 0, 2], .protocolError),
            (.settings, 1, [], .protocolError),
            (.settings, 0, [0, 4, 0x80, 0, 0, 0], .flowControlError),
            (.settings, 0, [0, 5, 0, 0, 0x10, 0], .protocolError),
            (.settings, 0, [0, 3, 0], .frameSizeError),
            (.rstStream, 0, [0, 0, 0, 8], .protocolError),
            (.windowUpdate, 0, [0, 0], .frameSizeError),
            (.windowUpdate, 0, [0, 0, 0, 0], .protocolError),
            (.continuation, 1, [0x82], .protocolError),
            (.ping, 0, [1, 2, 3], .frameSizeError),
            (.headers, 1, [0xff, 0xff, 0xff, 0xff, 0xff, 0xff], .compressionError),
        ])
    func protocolErrors(kind: HTTP2WireFrame.Kind, stream: UInt32, payload: [UInt8], code: HTTP2WireErrorCode) throws {
        let connection = try Connection()
        do {
            _ = try connection.client(kind, flags: kind == .headers ? .endHeaders : [], stream: stream, ByteBuffer(bytes: payload))
            Issue.record("\(kind) on stream \(stream) was accepted")
        } catch {
            #expect(error.code == code, "\(error)")
        }
    }

    @Test("a stream id that is not new opens nothing: a PROTOCOL_ERROR")
    func oldStreamID() throws {
        let connection = try Connection()
        _ = try connection.request(5)
        #expect(throws: HTTP2ConnectionError.self) { try connection.request(3) }
    }
}
