/// Retry policy for notifications that failed transiently (`resend:`).
public struct ResendSettings: Sendable, Equatable {
    /// Attempts per notification including the first (`max-attempts`), ≥ 1; default 5.
    public var maxAttempts: Int
    /// Delay before the first resend (`base-delay-ms`), ≥ 0; default 1 second.
    public var baseDelay: Duration
    /// Upper bound of the backoff delay (`max-delay-ms`), ≥ `baseDelay`; default 300 seconds.
    public var maxDelay: Duration
    /// Age after which a notification is no longer resent (`max-age-seconds`), ≥ 1 s; default 3600 s.
    public var maxAge: Duration
    /// How long a worker holds a claimed resend before others may take it (`lease-ms`), ≥ 1 ms;
    /// default 30 seconds.
    public var lease: Duration

    /// Creates resend settings; every parameter has the documented default.
    public init(
        maxAttempts: Int = 5, baseDelay: Duration = .milliseconds(1000), maxDelay: Duration = .milliseconds(300_000),
        maxAge: Duration = .seconds(3600), lease: Duration = .milliseconds(30_000)
    ) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxAge = maxAge
        self.lease = lease
    }
}
