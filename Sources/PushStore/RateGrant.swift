/// What ``RateLimiter/acquire(app:scope:ratePerSecond:burst:requested:)`` granted.
public struct RateGrant: Sendable, Hashable {
    /// Permits granted, `0...requested`.
    public var granted: Int
    /// When ``granted`` < requested: the time until the missing permits will have accrued at
    /// the bucket's rate (if no one else takes them); zero otherwise.
    public var retryAfter: Duration

    public init(granted: Int, retryAfter: Duration) {
        self.granted = granted
        self.retryAfter = retryAfter
    }
}
