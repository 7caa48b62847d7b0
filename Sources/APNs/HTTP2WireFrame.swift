import NIOCore

/// One HTTP/2 frame as it arrived (RFC 9113 §4.1): the client's codec reads frames itself
/// instead of running NIO's general-purpose HTTP/2 state machine.
struct HTTP2WireFrame {
    /// The frame types of RFC 9113 §6.
    enum Kind: UInt8 {
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
    struct Flags: OptionSet {
        var rawValue: UInt8
        static let endStream = Flags(rawValue: 0x1)
        static let ack = Flags(rawValue: 0x1)
        static let endHeaders = Flags(rawValue: 0x4)
        static let padded = Flags(rawValue: 0x8)
        static let priority = Flags(rawValue: 0x20)
    }

    /// The raw type: frames of unknown types are read and ignored, as RFC 9113 §4.1 requires.
    var type: UInt8
    var flags: Flags
    var streamID: UInt32
    var payload: ByteBuffer

    var kind: Kind? { Kind(rawValue: type) }

    static let headerSize = 9
    /// The largest stream id (2^31 - 1).
    static let maxStreamID: UInt32 = 0x7fff_ffff
    /// SETTINGS_MAX_FRAME_SIZE's initial value, and the largest frame this client accepts.
    static let defaultMaxFrameSize = 16_384
    /// SETTINGS_INITIAL_WINDOW_SIZE's initial value, and every connection window's.
    static let defaultWindowSize = 65_535
}
