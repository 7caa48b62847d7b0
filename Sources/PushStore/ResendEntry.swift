import APNsCore

/// A notification of a job waiting in the ``ResendBuffer`` to be sent to one token again.
package struct ResendEntry: Sendable, Hashable {
    /// The job the notification belongs to.
    package var jobID: String
    /// The device token to send to.
    package var token: DeviceToken
    /// APNs attempts made so far (0 when it was parked without being sent).
    package var attempts: Int
    /// When the first attempt failed, in milliseconds since 1970.
    package var firstFailedAt: Int64
    /// Why the last attempt failed, e.g. "ServiceUnavailable", "timeout".
    package var lastReason: String

    package init(jobID: String, token: DeviceToken, attempts: Int, firstFailedAt: Int64, lastReason: String) {
        self.jobID = jobID
        self.token = token
        self.attempts = attempts
        self.firstFailedAt = firstFailedAt
        self.lastReason = lastReason
    }
}
