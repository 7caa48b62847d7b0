/// How long to wait before trying again: the one rule behind every retry and reconnect of
/// PushFleet (Redis reconnects and cluster redirections, APNs reconnects and retries, the
/// pipeline's retries of Kafka and Redis operations, the resend buffer, a chunk lease's wait).
///
/// The `attempt`-th wait (1-based) is `base × 2^(attempt − 1)`, multiplied by a factor in
/// `[1 − jitter, 1 + jitter]` that `random` picks, and never longer than `maximum`. Jitter
/// spreads the retries of many clients that failed together, so they do not return together.
public struct ExponentialBackoff: Sendable, Hashable {
    /// The first wait (before jitter).
    public var base: Duration
    /// The longest wait, jitter included.
    public var maximum: Duration
    /// The relative spread, in `0...1`; 0 waits exactly.
    public var jitter: Double

    public init(base: Duration, maximum: Duration, jitter: Double = 0) {
        precondition(base >= .zero, "base must not be negative")
        precondition(maximum >= base, "maximum must not be shorter than base")
        precondition((0...1).contains(jitter), "jitter must be in 0...1")
        self.base = base
        self.maximum = maximum
        self.jitter = jitter
    }

    /// The wait before the `attempt`-th retry (1-based; lower counts as 1).
    ///
    /// - Parameter random: in `0...1` (clamped): 0 picks `1 − jitter`, 1 picks `1 + jitter`,
    ///   0.5 the plain doubling.
    public func delay(attempt: Int, random: Double = 0.5) -> Duration {
        // 2^40 × any sensible base is past any maximum; the cap keeps the product finite.
        let exponent = attempt <= 1 ? 0 : min(attempt - 1, 40)
        let window = min(Self.nanoseconds(base) * Double(sign: .plus, exponent: exponent, significand: 1), Self.nanoseconds(maximum))
        let factor = 1 - jitter + 2 * jitter * min(max(random, 0), 1)
        // Whole nanoseconds, so that equal inputs give equal waits whatever the rounding of the factor.
        return min(.nanoseconds(Int64((window * factor).rounded())), maximum)
    }

    private static func nanoseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }

    /// The wait before the `attempt`-th retry, with a random jitter.
    public func randomDelay(attempt: Int) -> Duration {
        delay(attempt: attempt, random: Double.random(in: 0...1))
    }
}
