import FlowControl

/// When a notification that failed transiently is sent again, and when it is given up.
///
/// The delay after attempt `n` is `baseDelay * 2^(n-1)`, multiplied by a random factor in
/// `[1 - jitter, 1 + jitter)` and then capped at ``maxDelay``; an APNs `Retry-After` that is
/// longer wins. An entry whose attempts reach ``maxAttempts``, or whose first failure is
/// ``maxAge`` old, is expired: the caller dead-letters it.
package struct ResendPolicy: Sendable, Hashable {
    /// Attempts after which an entry is expired (dead-lettered by the caller). Default 5.
    package var maxAttempts: Int
    /// The delay after the first attempt; it doubles with every further attempt. Default 1 s.
    package var baseDelay: Duration
    /// The longest delay, jitter included (a longer `Retry-After` still wins). Default 5 minutes.
    package var maxDelay: Duration
    /// How long after ``ResendEntry/firstFailedAt`` an entry is expired. Default 1 hour.
    package var maxAge: Duration
    /// How long a claim hides an entry from other workers (see ``ResendBuffer/claimDue(app:limit:)``).
    /// Default 30 s.
    package var lease: Duration
    /// The relative spread of the delay: it is multiplied by a random factor in
    /// `[1 - jitter, 1 + jitter)`; in `0...1`. Default 0.2.
    package var jitter: Double

    /// Creates a policy; every argument has the documented default.
    package init(
        maxAttempts: Int = 5,
        baseDelay: Duration = .seconds(1),
        maxDelay: Duration = .seconds(300),
        maxAge: Duration = .seconds(3_600),
        lease: Duration = .seconds(30),
        jitter: Double = 0.2
    ) {
        precondition(maxAttempts >= 1, "maxAttempts must be at least 1")
        precondition(baseDelay >= .zero, "baseDelay must not be negative")
        precondition(maxDelay >= baseDelay, "maxDelay must not be shorter than baseDelay")
        precondition(maxAge >= .milliseconds(1), "maxAge must be at least 1 ms")
        precondition(lease >= .milliseconds(1), "lease must be at least 1 ms")
        precondition((0...1).contains(jitter), "jitter must be in 0...1")
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxAge = maxAge
        self.lease = lease
        self.jitter = jitter
    }

    /// The delay before the next attempt of an entry that has made `attempts` attempts, in
    /// milliseconds: `baseDelay * 2^(attempts-1)` times `1 - jitter + 2 * jitter * random`,
    /// capped at ``maxDelay``.
    ///
    /// - Parameter random: a number in `0..<1` (the buffer's random source).
    package func delayMilliseconds(afterAttempts attempts: Int, random: Double) -> Int64 {
        ExponentialBackoff(base: baseDelay, maximum: maxDelay, jitter: jitter).delay(attempt: attempts, random: random).wholeMilliseconds
    }

    /// How long an app's buffer stays in Redis after its last ``ResendBuffer/schedule(app:_:)``:
    /// 7 days, or longer when an entry could still be waiting then (``maxAge`` + ``maxDelay`` +
    /// ``lease``). A running fleet settles or dead-letters every entry long before; the
    /// retention removes the buffer of an app taken out of the configuration, which no worker
    /// drains any more.
    package var retention: Duration {
        max(Self.minimumRetention, maxAge + maxDelay + lease)
    }

    /// The shortest ``retention``: as long as a finished job's state is kept.
    package static let minimumRetention: Duration = .seconds(7 * 24 * 3_600)

    /// Whether an entry with `attempts` attempts, first failed at `firstFailedAt`, is expired at
    /// `now` (all in milliseconds since 1970).
    package func isExpired(attempts: Int, firstFailedAt: Int64, now: Int64) -> Bool {
        attempts >= maxAttempts || now.subtractingReportingOverflow(firstFailedAt).partialValue >= maxAge.wholeMilliseconds
    }
}
