/// How many connections a pool needs, and how many streams each may carry: the rule the
/// connection pool follows (``APNsConnectionPoolStateMachine``), without I/O.
///
/// Throughput to APNs obeys Little's law: notifications in flight = rate × round trip. At Apple's
/// distance (20–80 ms from a data centre in the US or Europe, 150–250 ms from Asia), a rate of
/// 20,000/s needs 1,600 to 5,000 notifications in flight. A connection carries at most
///
/// - the server's `SETTINGS_MAX_CONCURRENT_STREAMS` (Apple: 1 until the first authenticated
///   request, then about 1,000), and the configured cap;
/// - the requests whose DATA fits in the connection's send window: Apple grants 65,535 bytes
///   and tops the window up only as it reads, so at most 65,535 bytes of payload are in flight
///   per connection per round trip (about 200 notifications of 300 bytes, 30 of 2 KB).
///
/// The streams wanted (in use, and asked for by callers waiting) are the demand: the worker's
/// in-flight window admits what the throttle allows, and what the pool cannot carry waits. Not
/// all of it is worth a stream: no pool needs more in flight than ``plannedRate`` × the round
/// trip × 2 (Little's law with headroom), where the round trip is the quickest answer of the
/// last ``shrinkWindowTicks`` seconds. At a distance that bound is far above the demand; on
/// loopback (a few milliseconds) it keeps a pool whose worker is busy with its CPU, not waiting
/// for answers, from opening connections that would only share the same CPU.
///
/// The pool keeps enough connections for that demand at ``utilization`` of their capacity,
/// between ``minimumConnections`` and ``maximumConnections``, and opens the missing ones at once
/// and in parallel (at most ``maximumConnecting`` handshakes at a time: a TLS handshake and the
/// first, authenticating request take about four round trips). It gives connections back one
/// at a time once the highest demand of the last ``shrinkWindowTicks`` ticks needs fewer.
public struct APNsPoolSizing: Sendable, Hashable {
    /// Connections kept open even when idle. Default 1.
    public var minimumConnections: Int
    /// At most this many connections per pool. Default 128.
    public var maximumConnections: Int
    /// At most this many streams per connection, whatever the server allows. Default 1,000.
    public var streamCap: Int
    /// The share of a connection's capacity the pool plans to use. Default 0.9.
    public var utilization: Double
    /// Connections being opened at once, at most. Default 64.
    public var maximumConnecting: Int
    /// Ticks (one a second) whose highest demand decides when a connection is given back, and
    /// whose quickest answer is the round trip. Default 30.
    public var shrinkWindowTicks: Int
    /// Notifications per second a pool is sized for at most: twice this times the round trip
    /// bounds the streams it plans for (twice: a stream whose DATA waits for the window is held
    /// longer than a round trip). Default 250,000: twice what one worker on a 2-core machine
    /// sends on loopback (a plateau of up to 135,000/s, 2026-11-29), so that the bound never
    /// decides a worker's rate at a distance. At 100,000 it did once the worker got faster: 69
    /// connections at 80 ms (100,000 × 2 × 82 ms over 237 streams each) held one worker to about
    /// 95,000/s while it sent 120,000/s on loopback (benchmarks/results/capacity-wan-quick.md).
    public var plannedRate: Double

    public init(
        minimumConnections: Int = 1, maximumConnections: Int = 128, streamCap: Int = 1_000, utilization: Double = 0.9,
        maximumConnecting: Int = 64, shrinkWindowTicks: Int = 30, plannedRate: Double = 250_000
    ) {
        self.plannedRate = max(1, plannedRate)
        self.minimumConnections = max(1, minimumConnections)
        self.maximumConnections = max(self.minimumConnections, maximumConnections)
        self.streamCap = max(1, streamCap)
        self.utilization = min(max(utilization, 0.1), 1)
        self.maximumConnecting = max(1, maximumConnecting)
        self.shrinkWindowTicks = max(1, shrinkWindowTicks)
    }

    /// A pool of exactly `connections`, each capped at `streamCap` streams: the fixed pool.
    public static func fixed(connections: Int, streamCap: Int) -> APNsPoolSizing {
        APNsPoolSizing(minimumConnections: connections, maximumConnections: connections, streamCap: streamCap)
    }

    /// Whether the pool's size never changes.
    public var isFixed: Bool { minimumConnections == maximumConnections }

    /// HTTP/2's framing around a request's DATA in the connection window: none (the window
    /// counts DATA payload only), but a request is never free: at least this many bytes.
    static let smallestRequest = 64

    /// The streams one connection may carry: the server's limit, the cap, and the requests of
    /// `bytesPerRequest` DATA bytes that fit in its send window (`window`); at least one.
    /// `bytesPerRequest` 0 (not known yet) leaves the window out.
    public func streams(maxStreams: Int, window: Int, bytesPerRequest: Int) -> Int {
        var streams = min(maxStreams, streamCap)
        if bytesPerRequest > 0 {
            streams = min(streams, window / max(bytesPerRequest, Self.smallestRequest))
        }
        return max(1, streams)
    }

    /// The streams worth planning for: `demand`, at most ``plannedRate`` × `roundTrip` × 2
    /// (all of it while the round trip is not known yet).
    public func plannedStreams(demand: Int, roundTrip: Duration?) -> Int {
        guard let roundTrip else { return demand }
        let bound = plannedRate * 2 * (roundTrip / .seconds(1))
        return min(demand, max(1, Int(bound.rounded(.up))))
    }

    /// The connections `demand` streams need when each carries `perConnection`.
    public func connections(forStreams demand: Int, perConnection: Int) -> Int {
        guard demand > 0 else { return minimumConnections }
        let usable = max(1, Double(max(1, perConnection)) * utilization)
        let needed = Int((Double(demand) / usable).rounded(.up))
        return min(max(needed, minimumConnections), maximumConnections)
    }
}
