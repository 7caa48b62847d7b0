import HTTP2Frames
import NIOCore
import Testing

@Suite("HTTP/2 frame reader")
struct HTTP2FrameReaderTests {
    static func bytes() -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeHTTP2Frame(type: .settings, streamID: 0, payload: ByteBuffer(bytes: [0, 3, 0, 0, 0, 100]))
        buffer.writeHTTP2Frame(type: .data, flags: .endStream, streamID: 7, payload: ByteBuffer(string: "{\"reason\":\"BadTopic\"}"))
        buffer.writeHTTP2Frame(type: .ping, flags: .ack, streamID: 0, payload: ByteBuffer(bytes: [1, 2, 3, 4, 5, 6, 7, 8]))
        buffer.writeHTTP2FrameHeader(length: 0, type: .settings, flags: .ack, streamID: 0)
        return buffer
    }

    static func describe(_ frame: HTTP2WireFrame) -> String {
        "\(frame.type)/\(frame.flags.rawValue)/\(frame.streamID)/\(Array(frame.payload.readableBytesView))"
    }

    static func readAll(_ reader: inout HTTP2FrameReader) throws -> [String] {
        var frames: [String] = []
        while let frame = try reader.next() { frames.append(describe(frame)) }
        return frames
    }

    @Test("frames come out whole however the bytes were cut")
    func anyCut() throws {
        let all = Self.bytes()
        var whole = HTTP2FrameReader()
        whole.append(all)
        let expected = try Self.readAll(&whole)
        #expect(expected.count == 4)
        #expect(expected[1].hasPrefix("0/1/7/"))

        for cut in [1, 2, 5, 9, 10, 17] {
            var reader = HTTP2FrameReader()
            var rest = all
            var frames: [String] = []
            while let piece = rest.readSlice(length: min(cut, rest.readableBytes)), piece.readableBytes > 0 {
                reader.append(piece)
                frames += try Self.readAll(&reader)
            }
            #expect(frames == expected, "pieces of \(cut) bytes")
        }
    }

    @Test("a frame over the frame size limit is a FRAME_SIZE_ERROR, known from its header alone")
    func oversize() throws {
        var reader = HTTP2FrameReader()
        var header = ByteBuffer()
        header.writeHTTP2FrameHeader(length: 16_385, type: .data, flags: [], streamID: 1)
        reader.append(header)
        #expect(throws: HTTP2ConnectionError.self) { try reader.next() }
        do {
            _ = try reader.next()
        } catch {
            #expect(error.code == .frameSizeError)
        }
    }

    @Test("an incomplete frame waits for its remaining bytes")
    func incomplete() throws {
        var reader = HTTP2FrameReader()
        var frame = ByteBuffer()
        frame.writeHTTP2Frame(type: .data, streamID: 1, payload: ByteBuffer(repeating: 7, count: 100))
        reader.append(frame.getSlice(at: 0, length: 50)!)
        #expect(try reader.next() == nil)
        reader.append(frame.getSlice(at: 50, length: 59)!)
        let whole = try #require(try reader.next())
        #expect(whole.payload.readableBytes == 100)
        #expect(try reader.next() == nil)
    }
}
