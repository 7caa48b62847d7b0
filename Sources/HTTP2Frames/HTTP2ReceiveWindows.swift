import NIOCore

/// The receive side of HTTP/2 flow control (RFC 9113 §6.9) for one connection that advertises
/// ``size`` bytes for the connection and for every stream: DATA beyond a window is a
/// FLOW_CONTROL_ERROR, and the connection's window is topped up with a WINDOW_UPDATE once half of
/// it is used. Streams are short-lived (one request or one answer) and never receive more than
/// their first window, so they get no updates; each side keeps its streams' counts with them.
package struct HTTP2ReceiveWindows {
    /// The windows PushFleet's client and, by default, the simulator advertise: 1 MiB.
    package static let generous = 1 << 20

    /// The window of the connection and of every stream.
    package let size: Int

    private var connectionWindow = HTTP2WireFrame.defaultWindowSize

    /// - Parameter size: the window of the connection and of every stream, at least the
    ///   protocol's 65,535 bytes. Apple's: 65,535, the connection's topped up as DATA is read
    ///   (in increments of about 32 KB).
    package init(size: Int = HTTP2ReceiveWindows.generous) {
        precondition(size >= HTTP2WireFrame.defaultWindowSize, "a window below the protocol's initial 65,535 bytes")
        self.size = size
    }

    /// Raises the connection's window from the protocol's 65,535 bytes to ``size``: the
    /// WINDOW_UPDATE of a connection's preface (none when ``size`` is the protocol's). The
    /// streams' window is advertised in SETTINGS.
    package mutating func open(into outbound: inout ByteBuffer) {
        if size > connectionWindow { writeUpdate(into: &outbound) }
    }

    /// Counts `length` DATA bytes (padding included) against the connection's window.
    ///
    /// - Throws: a FLOW_CONTROL_ERROR for DATA beyond the connection's window.
    package mutating func received(_ length: Int, into outbound: inout ByteBuffer) throws(HTTP2ConnectionError) {
        connectionWindow -= length
        guard connectionWindow >= 0 else {
            throw HTTP2ConnectionError(code: .flowControlError, message: "DATA beyond the connection window")
        }
        if connectionWindow <= size / 2 {
            writeUpdate(into: &outbound)
        }
    }

    /// Checks a stream's DATA so far against its window.
    ///
    /// - Throws: a FLOW_CONTROL_ERROR when `total` exceeds it.
    package func check(stream streamID: UInt32, received total: Int) throws(HTTP2ConnectionError) {
        guard total <= size else {
            throw HTTP2ConnectionError(code: .flowControlError, message: "DATA beyond stream \(streamID)'s window")
        }
    }

    private mutating func writeUpdate(into outbound: inout ByteBuffer) {
        outbound.writeHTTP2FrameHeader(length: 4, type: .windowUpdate, flags: [], streamID: 0)
        outbound.writeInteger(UInt32(size - connectionWindow))
        connectionWindow = size
    }
}
