import NIOCore

/// The send side of HTTP/2 flow control (RFC 9113 §6.9) for one connection: the connection's
/// window and each open stream's, the peer's SETTINGS_INITIAL_WINDOW_SIZE and
/// SETTINGS_MAX_FRAME_SIZE, and the DATA that waits for a window, in the order it was sent.
///
/// The APNs client sends request payloads with it and the simulator its error bodies.
package struct HTTP2SendWindows {
    private var connectionWindow = HTTP2WireFrame.defaultWindowSize
    private var initialWindow = HTTP2WireFrame.defaultWindowSize
    /// What the peer still lets each open stream send.
    private var streamWindows: [UInt32: Int] = [:]
    /// DATA that waits for a window, in the order it was sent.
    private var blocked: [(streamID: UInt32, bytes: ByteBuffer)] = []
    /// The largest frame payload the peer accepts.
    package private(set) var peerMaxFrameSize = HTTP2WireFrame.defaultMaxFrameSize
    /// The largest connection window the peer has granted: the most DATA it lets this side have
    /// in flight at once (65,535 bytes until it raises it; Apple never does, the simulator by
    /// default raises it to 1 MiB).
    package private(set) var peakConnectionWindow = HTTP2WireFrame.defaultWindowSize

    package init() {}

    /// A stream opened: its window starts at the peer's initial window size.
    package mutating func open(_ streamID: UInt32) {
        streamWindows[streamID] = initialWindow
    }

    /// A stream ended: its window goes, and DATA of it still waiting is dropped when the
    /// windows next open (not searched for now: a stream's end is on every request's path).
    package mutating func close(_ streamID: UInt32) {
        streamWindows.removeValue(forKey: streamID)
    }

    /// Forgets every stream and the DATA waiting for them.
    package mutating func closeAll() {
        streamWindows.removeAll()
        blocked.removeAll()
    }

    /// Writes `payload` on `streamID` as DATA frames as far as the windows allow, the last one
    /// with END_STREAM; the rest waits for WINDOW_UPDATE (behind DATA that already waits).
    /// Returns whether all of it was written.
    package mutating func send(_ payload: ByteBuffer, on streamID: UInt32, into outbound: inout ByteBuffer) -> Bool {
        guard streamWindows[streamID] != nil else { return true }
        guard blocked.isEmpty else {
            blocked.append((streamID, payload))
            return false
        }
        guard let rest = write(payload, on: streamID, into: &outbound) else { return true }
        blocked.append((streamID, rest))
        return false
    }

    /// A WINDOW_UPDATE arrived: writes what it lets leave and returns the streams whose DATA
    /// is now written whole.
    ///
    /// - Throws: a connection error for an increment of 0 on the connection or a connection
    ///   window over 2³¹ − 1.
    package mutating func windowUpdate(
        _ increment: Int, on streamID: UInt32, into outbound: inout ByteBuffer
    ) throws(HTTP2ConnectionError) -> [UInt32] {
        if streamID == 0 {
            guard increment > 0 else { throw HTTP2ConnectionError(code: .protocolError, message: "WINDOW_UPDATE of 0") }
            connectionWindow += increment
            guard connectionWindow <= Int(HTTP2WireFrame.maxStreamID) else {
                throw HTTP2ConnectionError(code: .flowControlError, message: "connection window over 2^31 - 1")
            }
            peakConnectionWindow = max(peakConnectionWindow, connectionWindow)
        } else {
            guard streamWindows[streamID] != nil else { return [] }
            streamWindows[streamID]! += increment
        }
        return writeBlocked(into: &outbound)
    }

    /// The peer's SETTINGS_INITIAL_WINDOW_SIZE changed: every open stream's window moves by the
    /// difference (and may go negative).
    package mutating func setInitialWindowSize(_ value: UInt32) throws(HTTP2ConnectionError) {
        guard value <= HTTP2WireFrame.maxStreamID else {
            throw HTTP2ConnectionError(code: .flowControlError, message: "SETTINGS_INITIAL_WINDOW_SIZE \(value)")
        }
        let delta = Int(value) - initialWindow
        initialWindow = Int(value)
        for streamID in streamWindows.keys { streamWindows[streamID]! += delta }
    }

    /// The peer's SETTINGS_MAX_FRAME_SIZE.
    package mutating func setMaxFrameSize(_ value: UInt32) throws(HTTP2ConnectionError) {
        guard value >= HTTP2WireFrame.defaultMaxFrameSize, value <= 0xff_ffff else {
            throw HTTP2ConnectionError(code: .protocolError, message: "SETTINGS_MAX_FRAME_SIZE \(value)")
        }
        peerMaxFrameSize = Int(value)
    }

    /// Writes the DATA that waited, in order, as far as the windows now allow; returns the
    /// streams whose DATA is written whole.
    package mutating func writeBlocked(into outbound: inout ByteBuffer) -> [UInt32] {
        guard !blocked.isEmpty else { return [] }
        let waiting = blocked
        blocked.removeAll()
        var finished: [UInt32] = []
        for (streamID, bytes) in waiting where streamWindows[streamID] != nil {
            if let rest = write(bytes, on: streamID, into: &outbound) {
                blocked.append((streamID, rest))
            } else {
                finished.append(streamID)
            }
        }
        return finished
    }

    /// Writes as much of `payload` as the windows allow; returns what is left.
    private mutating func write(_ payload: ByteBuffer, on streamID: UInt32, into outbound: inout ByteBuffer) -> ByteBuffer? {
        var payload = payload
        var window = streamWindows[streamID]!
        defer { streamWindows[streamID] = window }
        repeat {
            // A window may be negative after the peer lowered SETTINGS_INITIAL_WINDOW_SIZE.
            let length = max(0, min(payload.readableBytes, connectionWindow, window, peerMaxFrameSize))
            if length == 0, payload.readableBytes > 0 { return payload }
            let piece = payload.readSlice(length: length)!
            outbound.writeHTTP2Frame(type: .data, flags: payload.readableBytes == 0 ? .endStream : [], streamID: streamID, payload: piece)
            connectionWindow -= length
            window -= length
        } while payload.readableBytes > 0
        return nil
    }
}
