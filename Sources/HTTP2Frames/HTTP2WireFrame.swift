import NIOCore

/// One HTTP/2 frame as it arrived (RFC 9113 §4.1): the APNs client's codec reads frames itself
/// instead of running NIO's general-purpose HTTP/2 state machine.
package struct HTTP2WireFrame {
    /// The frame types of RFC 9113 §6.
    package enum Kind: UInt8 {
        case data = 0x0
        case headers = 0x1
        case priority = 0x2
        case rstStream = 0x3
        case settings = 0x4
        case pushPromise = 0x5
        case ping = 0x6
        case goAway = 0x7
        case windowUpdate = 0x8
        case continuation = 0x9
    }

    /// Flag bits; which apply depends on the type.
    package struct Flags: OptionSet {
        package var rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        package static let endStream = Flags(rawValue: 0x1)
        package static let ack = Flags(rawValue: 0x1)
        package static let endHeaders = Flags(rawValue: 0x4)
        package static let padded = Flags(rawValue: 0x8)
        package static let priority = Flags(rawValue: 0x20)
    }

    /// The raw type: frames of unknown types are read and ignored, as RFC 9113 §4.1 requires.
    package var type: UInt8
    package var flags: Flags
    package var streamID: UInt32
    package var payload: ByteBuffer

    package var kind: Kind? { Kind(rawValue: type) }

    package static let headerSize = 9
    /// What a client writes before its first frame (RFC 9113 §3.4).
    package static let connectionPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    /// The largest stream id (2^31 - 1).
    package static let maxStreamID: UInt32 = 0x7fff_ffff
    /// SETTINGS_MAX_FRAME_SIZE's initial value, and the largest frame this client accepts.
    package static let defaultMaxFrameSize = 16_384
    /// SETTINGS_INITIAL_WINDOW_SIZE's initial value, and every connection window's.
    package static let defaultWindowSize = 65_535
    /// SETTINGS_HEADER_TABLE_SIZE until a peer says otherwise (RFC 9113 §6.5.2).
    package static let defaultHeaderTableSize = 4_096

    package init(type: UInt8, flags: Flags, streamID: UInt32, payload: ByteBuffer) {
        self.type = type
        self.flags = flags
        self.streamID = streamID
        self.payload = payload
    }
}
