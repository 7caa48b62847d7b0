/// What ``RateLimiter/acquire(app:scope:ratePerSecond:burst:requested:)`` granted.
package struct RateGrant: Sendable, Hashable {
    /// Permits granted, `0...requested`.
    package var granted: Int
    /// When ``granted`` < requested: the time until the missing permits will have accrued at
    /// the bucket's rate (if no one else takes them); zero otherwise.
    package var retryAfter: Duration

    package init(granted: Int, retryAfter: Duration) {
        self.granted = granted
        self.retryAfter = retryAfter
    }
}
