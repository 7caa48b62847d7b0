import APNsCore

/// A failed attempt to send a job's notification to one token, for
/// ``ResendBuffer/schedule(app:_:)``.
package struct ResendFailure: Sendable, Hashable {
    /// The job the notification belongs to.
    package var jobID: String
    /// The device token the attempt was for.
    package var token: DeviceToken
    /// APNs attempts made so far, this one included; 0 for a notification parked without being
    /// sent (its app was suspended, or the worker stopped).
    package var attempts: Int
    /// When the first attempt failed, in milliseconds since 1970 (this attempt's time when it
    /// was the first).
    package var firstFailedAt: Int64
    /// Why the attempt failed, e.g. "ServiceUnavailable", "timeout".
    package var reason: String
    /// APNs's `Retry-After`, if it sent one: the entry is not due before now + this.
    package var retryAfter: Duration?

    package init(
        jobID: String,
        token: DeviceToken,
        attempts: Int,
        firstFailedAt: Int64,
        reason: String,
        retryAfter: Duration? = nil
    ) {
        self.jobID = jobID
        self.token = token
        self.attempts = attempts
        self.firstFailedAt = firstFailedAt
        self.reason = reason
        self.retryAfter = retryAfter
    }

    /// The entry this failure makes.
    package var entry: ResendEntry {
        ResendEntry(jobID: jobID, token: token, attempts: attempts, firstFailedAt: firstFailedAt, lastReason: reason)
    }
}
