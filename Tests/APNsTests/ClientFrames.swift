import HTTP2Frames
import NIOCore
import NIOHPACK

/// The server's view of what the APNs client wrote: its frames, without the preface's magic,
/// and its header blocks decoded by NIOHPACK (an implementation independent of the client's).
struct ClientFrames {
    static let magic = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

    private var reader = HTTP2FrameReader()
    private var decoder = HPACKDecoder(allocator: ByteBufferAllocator())

    /// Adds bytes the client wrote.
    mutating func append(_ bytes: ByteBuffer) {
        var bytes = bytes
        if bytes.readableBytes >= Self.magic.utf8.count, bytes.getString(at: bytes.readerIndex, length: Self.magic.utf8.count) == Self.magic {
            bytes.moveReaderIndex(forwardBy: Self.magic.utf8.count)
        }
        reader.append(bytes)
    }

    /// The whole frames added so far and not yet returned.
    mutating func frames() throws -> [HTTP2WireFrame] {
        var frames: [HTTP2WireFrame] = []
        while let frame = try reader.next() { frames.append(frame) }
        return frames
    }

    /// Decodes the client's header block (HEADERS without CONTINUATION).
    mutating func headers(_ frame: HTTP2WireFrame) throws -> HPACKHeaders {
        var block = frame.payload
        return try decoder.decodeHeaders(from: &block)
    }
}
