import NIOCore

/// Puts a header block together from a HEADERS frame and its CONTINUATION frames (RFC 9113
/// §6.2, §6.10): padding and priority fields removed, the pieces joined, and no other frame
/// allowed in between.
package struct HTTP2HeaderBlockAssembler {
    /// A whole header block and the stream it belongs to.
    package struct Block {
        package var streamID: UInt32
        package var endStream: Bool
        package var bytes: ByteBuffer
    }

    /// The largest block accepted, in bytes.
    package let maxSize: Int
    private var partial: Block?

    package init(maxSize: Int) {
        self.maxSize = maxSize
    }

    /// Checks that `frame` may come now: only CONTINUATION while a block is incomplete.
    package func check(_ frame: HTTP2WireFrame) throws(HTTP2ConnectionError) {
        if partial != nil, frame.kind != .continuation {
            throw HTTP2ConnectionError(code: .protocolError, message: "a header block was interrupted")
        }
    }

    /// Adds a HEADERS or CONTINUATION frame; returns the block once END_HEADERS came.
    package mutating func add(_ frame: HTTP2WireFrame) throws(HTTP2ConnectionError) -> Block? {
        var block: Block
        if frame.kind == .continuation {
            guard var started = partial, started.streamID == frame.streamID else {
                throw HTTP2ConnectionError(code: .protocolError, message: "CONTINUATION without a header block")
            }
            partial = nil
            started.bytes.writeImmutableBuffer(frame.payload)
            block = started
        } else {
            var bytes = try frame.unpaddedPayload()
            if frame.flags.contains(.priority) {
                guard bytes.readableBytes >= 5 else { throw HTTP2ConnectionError(code: .frameSizeError, message: "short HEADERS") }
                bytes.moveReaderIndex(forwardBy: 5)
            }
            block = Block(streamID: frame.streamID, endStream: frame.flags.contains(.endStream), bytes: bytes)
        }
        guard block.bytes.readableBytes <= maxSize else {
            throw HTTP2ConnectionError(code: .protocolError, message: "a header block over \(maxSize) bytes")
        }
        guard frame.flags.contains(.endHeaders) else {
            partial = block
            return nil
        }
        return block
    }
}
