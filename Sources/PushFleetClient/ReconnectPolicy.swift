/// What a device client does after its connection ended, by how it ended: the gateway's close
/// code (docs/online.md, "Closes"), or none when the connection failed or dropped. Pure.
public enum ReconnectDecision: Equatable, Sendable {
    /// Reconnect soon, to the next gateway: the gateway is draining (1001). The wait is spread
    /// over ``ReconnectPolicy/drainSpread`` so that a drained gateway's clients do not all
    /// arrive at once elsewhere.
    case reconnectSoon
    /// Reconnect after the backoff (a new connect token each time).
    case reconnectAfterBackoff
    /// Stop: reconnecting would be refused the same way, or would fight another connection.
    case stop(reason: String)
}

/// Backoff with full jitter: attempt `n` waits a random time in `0...min(cap, base × 2ⁿ)`.
/// Pure: the random fraction is passed in.
public struct ReconnectPolicy: Equatable, Sendable {
    /// The longest wait of the first attempt.
    public var base: Duration
    /// The longest wait of any attempt.
    public var cap: Duration
    /// Over how long the reconnects after a drain (1001) are spread.
    public var drainSpread: Duration

    public init(base: Duration = .milliseconds(500), cap: Duration = .seconds(60), drainSpread: Duration = .seconds(2)) {
        precondition(base > .zero && cap >= base, "a backoff needs 0 < base <= cap")
        self.base = base
        self.cap = cap
        self.drainSpread = drainSpread
    }

    /// How a connection's end decides: `code` is the close code the gateway sent, `nil` when the
    /// connection failed, or dropped without a close frame.
    public static func decide(closeCode code: UInt16?) -> ReconnectDecision {
        switch code {
        case 1001: .reconnectSoon
        case 1002, 1003, 1007, 1009: .stop(reason: "the gateway refused the client's frames (\(code!)): a client bug, not fixed by reconnecting")
        case 4003: .stop(reason: "the connect token was issued for another app (4003)")
        case 4004: .stop(reason: "the gateway does not know the app (4004)")
        case 4009: .stop(reason: "a newer connection of this device holds it (4009)")
        default: .reconnectAfterBackoff
        }
    }

    /// How long to wait before reconnecting: `attempt` counts the failed attempts since the last
    /// welcome (0 for the first); `random` is a fraction in `0..<1`.
    public func delay(_ decision: ReconnectDecision, attempt: Int, random: Double) -> Duration? {
        precondition((0..<1).contains(random), "random is a fraction in 0..<1")
        switch decision {
        case .stop:
            return nil
        case .reconnectSoon:
            return drainSpread * random
        case .reconnectAfterBackoff:
            let doublings = min(max(attempt, 0), 30)
            let ceiling = min(cap, base * Double(1 << doublings))
            return ceiling * random
        }
    }
}
