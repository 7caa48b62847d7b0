import FlowControl

/// The network between a client and the simulator: what a connection to Apple crosses. Every
/// byte, in both directions, arrives half a round trip after it was sent (the TLS handshake,
/// SETTINGS, WINDOW_UPDATE, requests and answers alike), with optional jitter and a bandwidth
/// cap per connection and direction. Order is kept: a chunk never overtakes the one before it.
///
/// Applied at the simulator's end of each connection, below TLS, so every client (PushFleet,
/// h2load, aioapns) crosses the same path and a ratio between them holds at any distance.
public struct APNsSimulatorNetwork: Sendable, Hashable {
    /// The time from a byte's send to the answer's arrival, without the simulator's own answer
    /// time (``APNsSimulatorConfiguration/latency``). Zero: loopback.
    public var roundTrip: Duration
    /// Added to each chunk's one-way delay, uniformly from zero up to this; never reorders.
    public var jitter: Duration
    /// Bytes per second per connection and direction; `nil`: unbounded.
    public var bytesPerSecond: Int?

    public init(roundTrip: Duration = .zero, jitter: Duration = .zero, bytesPerSecond: Int? = nil) {
        self.roundTrip = roundTrip
        self.jitter = jitter
        self.bytesPerSecond = bytesPerSecond
    }

    /// Loopback: nothing delayed.
    public static let loopback = APNsSimulatorNetwork()

    /// Whether anything is delayed or capped.
    public var isLoopback: Bool { roundTrip == .zero && jitter == .zero && bytesPerSecond == nil }
}

/// One direction of one connection under an ``APNsSimulatorNetwork``: when each chunk sent
/// arrives. A pure rule; ``APNsSimulatorNetworkHandler`` carries it out.
struct APNsSimulatorDelayLine {
    let network: APNsSimulatorNetwork
    /// When the last chunk arrives (nanoseconds on the caller's clock): none arrives before it.
    private var lastArrival: Int64 = .min
    /// When the link is free again for the next chunk's bytes (the bandwidth cap).
    private var linkFree: Int64 = .min

    init(network: APNsSimulatorNetwork) {
        self.network = network
    }

    /// The arrival time of `bytes` sent at `now`, with `jitter` (0…1) picking the jitter.
    mutating func arrival(ofBytes bytes: Int, sentAt now: Int64, jitter: Double) -> Int64 {
        var departure = now
        if let rate = network.bytesPerSecond, rate > 0 {
            // The chunk leaves once the link has carried what was queued before it.
            let start = max(now, linkFree)
            let transmission = Int64((Double(bytes) / Double(rate) * 1e9).rounded(.up))
            linkFree = start + transmission
            departure = linkFree
        }
        let oneWay = network.roundTrip.nanoseconds / 2 + Int64(Double(network.jitter.nanoseconds) * min(max(jitter, 0), 1))
        let arrival = max(departure + oneWay, lastArrival)
        lastArrival = arrival
        return arrival
    }
}
