import NIOCore

/// Cuts the bytes read from a connection into HTTP/2 frames, across reads of any size.
package struct HTTP2FrameReader {
    private var buffer: ByteBuffer?
    /// The largest frame payload accepted (our SETTINGS_MAX_FRAME_SIZE).
    package var maxFrameSize = HTTP2WireFrame.defaultMaxFrameSize

    package init() {}

    /// Adds bytes read from the connection.
    package mutating func append(_ bytes: ByteBuffer) {
        if var pending = buffer, pending.readableBytes > 0 {
            buffer = nil  // keep the storage uniquely referenced while appending
            pending.writeImmutableBuffer(bytes)
            buffer = pending
        } else {
            buffer = bytes
        }
    }

    /// The next whole frame, or `nil` until more bytes arrive. The payload is a slice of the
    /// bytes read (no copy).
    package mutating func next() throws(HTTP2ConnectionError) -> HTTP2WireFrame? {
        guard var bytes = buffer, bytes.readableBytes >= HTTP2WireFrame.headerSize else { return nil }
        let start = bytes.readerIndex
        let length =
            Int(bytes.getInteger(at: start, as: UInt8.self)!) << 16
            | Int(bytes.getInteger(at: start + 1, as: UInt16.self)!)
        guard length <= maxFrameSize else {
            throw HTTP2ConnectionError(code: .frameSizeError, message: "a frame of \(length) bytes exceeds \(maxFrameSize)")
        }
        guard bytes.readableBytes >= HTTP2WireFrame.headerSize + length else { return nil }
        buffer = nil
        let type = bytes.getInteger(at: start + 3, as: UInt8.self)!
        let flags = HTTP2WireFrame.Flags(rawValue: bytes.getInteger(at: start + 4, as: UInt8.self)!)
        let streamID = bytes.getInteger(at: start + 5, as: UInt32.self)! & HTTP2WireFrame.maxStreamID
        bytes.moveReaderIndex(forwardBy: HTTP2WireFrame.headerSize)
        let payload = bytes.readSlice(length: length)!
        if bytes.readableBytes > 0 {
            buffer = bytes
        }
        return HTTP2WireFrame(type: type, flags: flags, streamID: streamID, payload: payload)
    }
}
