/// When the gateway pings a connection and renews its presence.
///
/// Connections that open together (a reconnect storm after a deploy) would otherwise be pinged
/// together, every interval, forever: each connection's pings are offset by its slice, one of
/// 20 per interval, by connection number, so a gateway's pings (and the presence refreshes they
/// bring) spread evenly over the interval.
public struct HeartbeatSchedule: Sendable, Hashable {
    public static let slices = 20

    public let pingInterval: Duration
    public let idleTimeout: Duration

    public init(pingInterval: Duration, idleTimeout: Duration) {
        precondition(pingInterval > .zero && idleTimeout >= pingInterval, "pings come before the idle timeout")
        self.pingInterval = pingInterval
        self.idleTimeout = idleTimeout
    }

    /// The delay of connection `connection`'s first ping after it opened: one interval plus its
    /// slice of the interval, so no two neighbouring connections share a slice.
    public func firstPing(connection: UInt64) -> Duration {
        pingInterval + pingInterval / Self.slices * Int(connection % UInt64(Self.slices))
    }

    /// How long a presence record holds without renewal: the idle timeout (a silent connection
    /// is closed by then) plus one interval (the renewal of a live one lands in time).
    public var presenceLease: Duration { idleTimeout + pingInterval }

    /// Whether a connection last heard from at `lastHeard` is idle at `now` (nanoseconds).
    public func isIdle(lastHeard: UInt64, now: UInt64) -> Bool {
        now >= lastHeard && Duration.nanoseconds(Int64(now - lastHeard)) >= idleTimeout
    }
}
