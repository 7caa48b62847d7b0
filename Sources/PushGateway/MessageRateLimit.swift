/// The per-connection frame budget: a token bucket of `burst` frames refilled at `perSecond`.
/// Pure: the caller passes the time (monotonic nanoseconds), so tests need no clock.
public struct MessageRateLimit: Sendable, Hashable {
    public let perSecond: Int
    public let burst: Int
    /// Frames that may still come at once, in millionths of a frame (integer arithmetic, exact).
    private var available: Int64
    private var updatedAt: UInt64

    private static let unit: Int64 = 1_000_000

    public init(perSecond: Int, burst: Int, now: UInt64) {
        precondition(perSecond >= 1 && burst >= 1, "a frame rate and burst are at least 1")
        self.perSecond = perSecond
        self.burst = burst
        self.available = Int64(burst) * Self.unit
        self.updatedAt = now
    }

    /// Takes one frame's permit at `now`: `false` when the budget is spent (the connection is
    /// then closed with 4029).
    public mutating func admit(now: UInt64) -> Bool {
        if now > updatedAt {
            // Refill: perSecond frames per 10⁹ ns, in millionths of a frame.
            let elapsed = Int64(min(now - updatedAt, 3_600_000_000_000))
            available = min(Int64(burst) * Self.unit, available + elapsed * Int64(perSecond) / 1_000)
            updatedAt = now
        }
        guard available >= Self.unit else { return false }
        available -= Self.unit
        return true
    }
}
