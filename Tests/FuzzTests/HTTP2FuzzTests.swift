import Foundation
import HTTP2Frames
import NIOCore
import NIOEmbedded
import NIOHPACK
import Synchronization
import Testing

@testable import APNs
@testable import PushFleetFuzz

/// The APNs client's HTTP/2 codec under mutated server bytes: three requests go out on an
/// `EmbeddedChannel`, a server byte stream derived from valid conversations (SETTINGS, responses
/// with and without bodies, CONTINUATION, padding, PING, WINDOW_UPDATE, RST_STREAM, GOAWAY, an
/// unknown frame type) arrives in pieces, and then the connection times out or closes. Whatever
/// the bytes: nothing crashes, what the client writes is well-formed HTTP/2, every request gets
/// an outcome once the connection is gone, and the pool hears `closed` exactly once.
@Suite("Fuzzing the HTTP/2 frame handling")
struct HTTP2FuzzTests {
    final class Tally: Sendable {
        private let counts = Mutex<[String: Int]>([:])
        func add(_ name: String) { counts.withLock { $0[name, default: 0] += 1 } }
        subscript(_ name: String) -> Int { counts.withLock { $0[name] ?? 0 } }
        var all: [String: Int] { counts.withLock { $0 } }
    }

    /// Server conversations the mutations start from.
    static func seeds() throws -> [[UInt8]] {
        // Each conversation is a connection of its own, with its own HPACK dynamic table.
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        func block(_ headers: HPACKHeaders) throws -> ByteBuffer {
            var bytes = ByteBuffer()
            try encoder.encode(headers: headers, to: &bytes)
            return bytes
        }
        func settings(_ values: [(UInt16, UInt32)]) -> ByteBuffer {
            var payload = ByteBuffer()
            for (id, value) in values {
                payload.writeInteger(id)
                payload.writeInteger(value)
            }
            return payload
        }
        func integer(_ value: UInt32) -> ByteBuffer {
            var payload = ByteBuffer()
            payload.writeInteger(value)
            return payload
        }
        func goAway(last: UInt32, code: UInt32, debug: String) -> ByteBuffer {
            var payload = ByteBuffer()
            payload.writeInteger(last)
            payload.writeInteger(code)
            payload.writeString(debug)
            return payload
        }

        // 1. Answers for all three: a 200, a 400 with its reason, a 200 split over CONTINUATION;
        //    a PING and a window update on the way; then a graceful GOAWAY.
        var full = ByteBuffer()
        full.writeHTTP2Frame(type: .settings, streamID: 0, payload: settings([(0x3, 100), (0x4, 65_535), (0x5, 16_384)]))
        full.writeHTTP2Frame(type: .settings, flags: .ack, streamID: 0, payload: ByteBuffer())
        full.writeHTTP2Frame(
            type: .headers, flags: [.endHeaders, .endStream], streamID: 1,
            payload: try block([":status": "200", "apns-id": "6E5C9B9F-2A0D-4F8C-9D6B-0C1F1A2B3C4D"]))
        full.writeHTTP2Frame(type: .ping, streamID: 0, payload: ByteBuffer(bytes: [1, 2, 3, 4, 5, 6, 7, 8]))
        full.writeHTTP2Frame(type: .headers, flags: .endHeaders, streamID: 3, payload: try block([":status": "400", "apns-id": "A"]))
        full.writeHTTP2Frame(type: .data, flags: .endStream, streamID: 3, payload: ByteBuffer(string: #"{"reason":"BadDeviceToken"}"#))
        full.writeHTTP2Frame(type: .windowUpdate, streamID: 0, payload: integer(1_000))
        var split = try block([":status": "200", "apns-id": "B", "apns-unique-id": "C"])
        let head = split.readSlice(length: split.readableBytes / 2)!
        full.writeHTTP2Frame(type: .headers, flags: .endStream, streamID: 5, payload: head)
        full.writeHTTP2Frame(type: .continuation, flags: .endHeaders, streamID: 5, payload: split)
        full.writeHTTP2Frame(type: .goAway, streamID: 0, payload: goAway(last: 5, code: 0, debug: #"{"reason":"Shutdown"}"#))

        // 2. A tight stream limit, a refused stream, a padded body, a PRIORITY and an unknown
        //    frame type, then a GOAWAY with an error.
        encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var refused = ByteBuffer()
        refused.writeHTTP2Frame(type: .settings, streamID: 0, payload: settings([(0x3, 1)]))
        refused.writeHTTP2Frame(type: .rstStream, streamID: 1, payload: integer(0x7))
        refused.writeHTTP2Frame(type: .priority, streamID: 3, payload: ByteBuffer(bytes: [0, 0, 0, 1, 16]))
        refused.writeHTTP2Frame(type: .headers, flags: .endHeaders, streamID: 3, payload: try block([":status": "429"]))
        var padded = ByteBuffer(bytes: [4])
        padded.writeString(#"{"reason":"TooManyRequests"}"#)
        padded.writeBytes([0, 0, 0, 0])
        refused.writeHTTP2Frame(type: .data, flags: [.endStream, .padded], streamID: 3, payload: padded)
        var unknown = ByteBuffer()
        unknown.writeBytes([0, 0, 3, 0x20, 0, 0, 0, 0, 0, 9, 9, 9])
        refused.writeImmutableBuffer(unknown)
        refused.writeHTTP2Frame(type: .goAway, streamID: 0, payload: goAway(last: 3, code: 2, debug: "internal"))

        // 3. Streams reset by the server, a flow-controlled body over two DATA frames, and a
        //    settings change of the window mid-way.
        encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var resets = ByteBuffer()
        resets.writeHTTP2Frame(type: .settings, streamID: 0, payload: settings([(0x3, 10), (0x4, 10)]))
        resets.writeHTTP2Frame(type: .headers, flags: .endHeaders, streamID: 1, payload: try block([":status": "410", "apns-id": "D"]))
        resets.writeHTTP2Frame(type: .data, streamID: 1, payload: ByteBuffer(string: #"{"reason":"Unregis"#))
        resets.writeHTTP2Frame(type: .data, flags: .endStream, streamID: 1, payload: ByteBuffer(string: #"tered","timestamp":1}"#))
        resets.writeHTTP2Frame(type: .windowUpdate, streamID: 3, payload: integer(100_000))
        resets.writeHTTP2Frame(type: .settings, streamID: 0, payload: settings([(0x4, 1 << 20)]))
        resets.writeHTTP2Frame(type: .rstStream, streamID: 3, payload: integer(0x2))
        resets.writeHTTP2Frame(type: .rstStream, streamID: 5, payload: integer(0x8))
        return [full, refused, resets].map { Array($0.readableBytesView) }
    }

    @Test("server bytes: no crash, well-formed client frames, every request answered once the connection is gone")
    func serverBytes() async throws {
        await FuzzRun.run("http2", corpus: try Self.seeds() + FuzzRun.corpus("http2")) { input, mutator in
            _ = try converse(input, pieces: mutator.below(4) + 1, firstCut: mutator.below(max(input.count, 1)), timesOut: mutator.below(2) == 0)
        }
    }

    @Test("the seeds are conversations the client understands: their answers reach the requests")
    func seedsAreUnderstood() throws {
        let seeds = try Self.seeds()
        let full = try converse(seeds[0], pieces: 1, firstCut: 0, timesOut: false)
        #expect(full.outcomes == ["200": 2, "400 BadDeviceToken": 1], "\(full)")
        #expect(full.events["ready"] == 1 && full.events["goAway"] == 1, "\(full)")
        // In many small reads, the same.
        #expect(try converse(seeds[0], pieces: 4, firstCut: 10, timesOut: false).outcomes == full.outcomes)
        let refused = try converse(seeds[1], pieces: 1, firstCut: 0, timesOut: false)
        // Stream 1 refused by RST_STREAM, stream 3 answered, the third request never left (one
        // stream at a time) and is refused by the GOAWAY.
        #expect(refused.outcomes == ["refused": 2, "429 TooManyRequests": 1], "\(refused)")
        let resets = try converse(seeds[2], pieces: 2, firstCut: 30, timesOut: false)
        #expect(resets.outcomes["410 Unregistered"] == 1, "\(resets)")
        // Streams 3 and 5 reset by the server: lost (the server may have acted on them).
        #expect(resets.outcomes.filter { $0.key.hasPrefix("lost the server reset stream") }.count == 2, "\(resets)")
        let timedOut = try converse(Array(seeds[2].prefix(9 + 12)), pieces: 1, firstCut: 0, timesOut: true)
        #expect(timedOut.outcomes["timeout"] == 3, "only SETTINGS arrived: \(timedOut)")
    }

    /// What one conversation came to: the outcomes of the three requests (status and reason,
    /// `refused`, `lost`, `timeout`) and what the pool heard.
    struct Conversation: CustomStringConvertible {
        var outcomes: [String: Int]
        var events: [String: Int]
        var description: String { "outcomes \(outcomes), events \(events)" }
    }

    /// One connection through `input`, delivered in `pieces` reads (the first `firstCut` bytes
    /// long when there are several), then either left to time out or closed.
    func converse(_ input: [UInt8], pieces: Int, firstCut: Int, timesOut: Bool) throws -> Conversation {
        let channel = EmbeddedChannel()
        let events = Tally()
        let handler = APNsConnectionHandler(
            events: .init(
                ready: { _, _ in events.add("ready") }, maxStreamsChanged: { _ in events.add("maxStreams") },
                goingAway: { _, _ in events.add("goAway") }, unresponsive: { events.add("unresponsive") }, streamsEnded: { _, _ in },
                closed: { events.add("closed") }),
            pingInterval: nil, pingTimeout: .seconds(1))
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        let outcomes = Tally()
        for n in 0..<3 {
            let promise = channel.eventLoop.makePromise(of: APNsStreamOutcome.self)
            promise.futureResult.whenComplete { result in
                outcomes.add("any")
                switch result {
                case .success(.response(let status, _, let body)):
                    let reason = body.flatMap { try? JSONSerialization.jsonObject(with: Data($0.readableBytesView)) as? [String: Any] }?["reason"]
                    outcomes.add(reason.map { "\(status) \($0)" } ?? "\(status)")
                case .success(.refused): outcomes.add("refused")
                case .success(.connectionLost(let error)): outcomes.add("lost \(error)")
                case .success(.timedOut): outcomes.add("timeout")
                case .failure: outcomes.add("failed")
                }
            }
            var headers = HPACKHeaders()
            headers.add(name: ":method", value: "POST")
            headers.add(name: ":scheme", value: "https")
            headers.add(name: ":path", value: "/3/device/\(String(repeating: "ab", count: 32))", indexing: .nonIndexable)
            headers.add(name: "apns-topic", value: "com.example.app")
            handler.send(headers: headers, payload: ByteBuffer(string: #"{"aps":{"alert":"\#(n)"}}"#), timeout: .seconds(10), promise: promise)
        }
        channel.embeddedEventLoop.run()

        var bytes = ByteBuffer(bytes: input)
        var remaining = pieces
        while bytes.readableBytes > 0, channel.isActive {
            let length = remaining > 1 ? min(max(firstCut, 1), bytes.readableBytes) : bytes.readableBytes
            remaining -= 1
            // A codec error closes the connection; it is not raised through the pipeline.
            try channel.writeInbound(bytes.readSlice(length: length)!)
            channel.embeddedEventLoop.run()
        }
        if timesOut {
            channel.embeddedEventLoop.advanceTime(by: .seconds(12))
        }
        if channel.isActive {
            try channel.close().wait()
        }
        channel.embeddedEventLoop.run()

        try checkClientFrames(channel)
        guard outcomes["any"] == 3 else { throw FuzzFinding("\(3 - outcomes["any"]) of 3 requests got no outcome after the connection closed") }
        guard events["closed"] == 1 else { throw FuzzFinding("the pool heard closed \(events["closed"]) times") }
        return Conversation(outcomes: outcomes.all.filter { $0.key != "any" }, events: events.all)
    }

    /// Everything the client wrote: the preface, then frames a reader takes without error, none
    /// larger than the default frame size (the client never raises it for itself).
    func checkClientFrames(_ channel: EmbeddedChannel) throws {
        var written = ByteBuffer()
        while var chunk = try channel.readOutbound(as: ByteBuffer.self) {
            written.writeBuffer(&chunk)
        }
        guard written.readString(length: 24) == "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" else {
            throw FuzzFinding("the client did not open with the preface")
        }
        var reader = HTTP2FrameReader()
        reader.append(written)
        do {
            while let frame = try reader.next() {
                guard frame.payload.readableBytes <= HTTP2WireFrame.defaultMaxFrameSize else {
                    throw FuzzFinding("the client wrote a \(frame.payload.readableBytes)-byte frame")
                }
            }
        } catch let error as FuzzFinding {
            throw error
        } catch {
            throw FuzzFinding("the client wrote a malformed frame: \(error)")
        }
    }
}
