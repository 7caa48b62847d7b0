import NIOCore

extension HTTP2WireFrame {
    /// The payload without its padding (RFC 9113 §6.1, §6.2).
    package func unpaddedPayload() throws(HTTP2ConnectionError) -> ByteBuffer {
        guard flags.contains(.padded) else { return payload }
        var payload = payload
        guard let padding = payload.readInteger(as: UInt8.self), Int(padding) <= payload.readableBytes else {
            throw HTTP2ConnectionError(code: .protocolError, message: "padding longer than the frame")
        }
        return payload.readSlice(length: payload.readableBytes - Int(padding))!
    }

    /// The parameters of a SETTINGS frame that is not an ACK, in order (RFC 9113 §6.5).
    ///
    /// - Throws: a connection error for SETTINGS on a stream or a payload not made of 6-byte
    ///   parameters.
    package func settingsParameters() throws(HTTP2ConnectionError) -> [(id: UInt16, value: UInt32)] {
        guard streamID == 0 else { throw HTTP2ConnectionError(code: .protocolError, message: "SETTINGS on a stream") }
        guard payload.readableBytes % 6 == 0 else { throw HTTP2ConnectionError(code: .frameSizeError, message: "malformed SETTINGS") }
        var payload = payload
        var parameters: [(id: UInt16, value: UInt32)] = []
        while let id = payload.readInteger(as: UInt16.self), let value = payload.readInteger(as: UInt32.self) {
            parameters.append((id, value))
        }
        return parameters
    }

    /// A WINDOW_UPDATE's increment.
    package func windowIncrement() throws(HTTP2ConnectionError) -> Int {
        guard payload.readableBytes == 4 else { throw HTTP2ConnectionError(code: .frameSizeError, message: "malformed WINDOW_UPDATE") }
        return Int(payload.getInteger(at: payload.readerIndex, as: UInt32.self)! & 0x7fff_ffff)
    }
}
