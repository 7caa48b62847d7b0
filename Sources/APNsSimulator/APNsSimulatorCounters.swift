/// What the simulator has seen since it started or was last reset.
///
/// A notification is *accepted* when its 200 response has been written to the connection.
/// Two accepted notifications are the same notification when they share the device token and
/// the `apns-id` header (or, for requests without `apns-id`, the device token and the payload
/// bytes); ``duplicates`` counts every acceptance beyond the first of the same notification.
public struct APNsSimulatorCounters: Sendable, Hashable, Codable {
    /// Complete requests received (answered, stalled or dropped by a reset).
    public var requests: Int = 0
    /// Requests answered 200.
    public var accepted: Int = 0
    /// Distinct notifications accepted (see the type's documentation); 0 unless duplicates
    /// are tracked.
    public var distinctAccepted: Int = 0
    /// Acceptances beyond the first of the same notification; 0 unless duplicates are tracked.
    public var duplicates: Int = 0
    /// Rejections by reason (the `reason` string).
    public var rejections: [String: Int] = [:]
    /// Accepted notifications per device token; empty unless duplicates are tracked.
    public var acceptedPerToken: [String: Int] = [:]
    /// Device tokens that would show more than one notification: each accepted copy without an
    /// `apns-collapse-id` shows on its own, copies sharing one show once. A token accepted twice
    /// with one collapse id is in ``acceptedPerToken`` twice but not here. 0 unless duplicates
    /// are tracked.
    public var shownTwice: Int = 0
    /// Requests never answered on purpose (stall fault).
    public var stalled: Int = 0
    /// Connections accepted (TCP).
    public var connections: Int = 0
    /// GOAWAY frames sent by the fault injector.
    public var goAways: Int = 0
    /// Connections closed by the reset fault.
    public var connectionResets: Int = 0
    /// TLS handshakes aborted by the fault injector.
    public var tlsHandshakeFailures: Int = 0
    /// Connections closed with GOAWAY IdleTimeout.
    public var idleTimeouts: Int = 0
    /// PINGs received from clients (acknowledged unless the connection went silent).
    public var pings: Int = 0
    /// Connections silenced by the unresponsive fault.
    public var unresponsiveConnections: Int = 0
    /// Broadcast channels held (over every bundle id); not zeroed by a reset.
    public var channels: Int = 0
    /// Broadcasts accepted per channel id.
    public var broadcasts: [String: Int] = [:]

    public init() {}

    /// Total rejections over all reasons.
    public var rejected: Int { rejections.values.reduce(0, +) }
}
