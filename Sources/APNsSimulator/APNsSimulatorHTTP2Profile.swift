import HTTP2Frames

/// How the simulator's HTTP/2 looks to a client: the windows it grants and the header limit it
/// advertises and enforces.
public struct APNsSimulatorHTTP2Profile: Sendable, Hashable {
    /// The window of every stream (SETTINGS_INITIAL_WINDOW_SIZE) and of the connection, which is
    /// topped up as DATA is read, once half of it is used.
    public var receiveWindow: Int
    /// SETTINGS_MAX_HEADER_LIST_SIZE: what it accepts of a request's headers.
    public var maxHeaderListSize: Int
    /// Whether SETTINGS also names HEADER_TABLE_SIZE and MAX_FRAME_SIZE at the protocol's
    /// defaults (4,096 and 16,384), as Apple's does.
    public var advertisesProtocolDefaults: Bool

    public init(receiveWindow: Int, maxHeaderListSize: Int, advertisesProtocolDefaults: Bool) {
        self.receiveWindow = max(receiveWindow, HTTP2WireFrame.defaultWindowSize)
        self.maxHeaderListSize = maxHeaderListSize
        self.advertisesProtocolDefaults = advertisesProtocolDefaults
    }

    /// 1 MiB windows: a load-test target that never holds a client back.
    public static let generous = APNsSimulatorHTTP2Profile(
        receiveWindow: 1 << 20, maxHeaderListSize: 8_192, advertisesProtocolDefaults: false)

    /// What Apple's servers advertise: HEADER_TABLE_SIZE 4,096, INITIAL_WINDOW_SIZE 65,535,
    /// MAX_FRAME_SIZE 16,384, MAX_HEADER_LIST_SIZE 8,000, and a connection window left at the
    /// protocol's 65,535 bytes, replenished only as DATA is read (in increments of about 32 KB).
    /// At a distance, a connection then carries at most 65,535 bytes of DATA per round trip.
    public static let apple = APNsSimulatorHTTP2Profile(
        receiveWindow: HTTP2WireFrame.defaultWindowSize, maxHeaderListSize: 8_000, advertisesProtocolDefaults: true)
}
