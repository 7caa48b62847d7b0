import NIOCore

extension ByteBuffer {
    /// Writes a frame header (RFC 9113 §4.1).
    package mutating func writeHTTP2FrameHeader(length: Int, type: HTTP2WireFrame.Kind, flags: HTTP2WireFrame.Flags, streamID: UInt32) {
        writeRepeatingByte(0, count: HTTP2WireFrame.headerSize)
        setHTTP2FrameHeader(at: writerIndex - HTTP2WireFrame.headerSize, length: length, type: type, flags: flags, streamID: streamID)
    }

    /// Fills in a frame header at `index`, in bytes already written (a header written ahead of
    /// its payload, whose length was not known yet).
    package mutating func setHTTP2FrameHeader(
        at index: Int, length: Int, type: HTTP2WireFrame.Kind, flags: HTTP2WireFrame.Flags, streamID: UInt32
    ) {
        setInteger(UInt8(truncatingIfNeeded: length >> 16), at: index)
        setInteger(UInt16(truncatingIfNeeded: length), at: index + 1)
        setInteger(type.rawValue, at: index + 3)
        setInteger(flags.rawValue, at: index + 4)
        setInteger(streamID & HTTP2WireFrame.maxStreamID, at: index + 5)
    }

    /// Writes a SETTINGS frame (not an ACK) with `parameters`, in order (RFC 9113 §6.5): the
    /// counterpart of ``HTTP2WireFrame/settingsParameters()``.
    package mutating func writeHTTP2Settings(_ parameters: [(HTTP2SettingID, UInt32)]) {
        writeHTTP2FrameHeader(length: parameters.count * 6, type: .settings, flags: [], streamID: 0)
        for (id, value) in parameters {
            writeInteger(id.rawValue)
            writeInteger(value)
        }
    }

    /// Writes a whole frame whose payload is `payload`.
    package mutating func writeHTTP2Frame(type: HTTP2WireFrame.Kind, flags: HTTP2WireFrame.Flags = [], streamID: UInt32, payload: ByteBuffer) {
        writeHTTP2FrameHeader(length: payload.readableBytes, type: type, flags: flags, streamID: streamID)
        writeImmutableBuffer(payload)
    }
}
