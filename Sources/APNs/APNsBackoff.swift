/// Exponential backoff with jitter: `base × 2^(attempt-1)`, capped at `maximum`, scaled by a
/// jitter factor in 0.5...1 so that many clients do not retry in lockstep.
struct APNsBackoff: Sendable, Hashable {
    var base: Duration
    var maximum: Duration

    /// The delay before the `attempt`-th retry (1-based); `jitter` in 0...1 picks a point in the
    /// upper half of the window.
    func delay(attempt: Int, jitter: Double) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        let window = min(base * (1 << exponent), maximum)
        return window * (0.5 + 0.5 * min(max(jitter, 0), 1))
    }

    /// The delay with a random jitter.
    func randomDelay(attempt: Int) -> Duration {
        delay(attempt: attempt, jitter: Double.random(in: 0...1))
    }
}
