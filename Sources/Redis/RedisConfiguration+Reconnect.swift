import FlowControl

extension RedisConfiguration {
    /// Exponential backoff for (re)connecting: attempt 1 runs at once, attempt n waits
    /// `min(initialDelay × 2^(n-2), maxDelay)` before it. After `maxAttempts` failures the command
    /// throws ``RedisClientError/Code/connectionFailed``. The worst case before that error is the
    /// sum of the delays plus `maxAttempts × connectTimeout`.
    public struct Reconnect: Sendable {
        /// Connection attempts per command that finds the connection down. Default 5.
        public var maxAttempts: Int
        /// Delay before the second attempt. Default 50 ms.
        public var initialDelay: Duration
        /// Cap on the delay between attempts. Default 2 seconds.
        public var maxDelay: Duration

        /// Creates a policy; every argument has the documented default.
        public init(maxAttempts: Int = 5, initialDelay: Duration = .milliseconds(50), maxDelay: Duration = .seconds(2)) {
            precondition(maxAttempts > 0, "maxAttempts must be positive")
            self.maxAttempts = maxAttempts
            self.initialDelay = initialDelay
            self.maxDelay = maxDelay
        }

        /// The wait before `attempt` (1-based): none before the first, then the backoff's.
        func delay(beforeAttempt attempt: Int) -> Duration {
            guard attempt > 1 else { return .zero }
            return ExponentialBackoff(base: initialDelay, maximum: max(maxDelay, initialDelay)).delay(attempt: attempt - 1)
        }
    }
}
