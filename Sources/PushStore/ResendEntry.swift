import APNsCore

/// A notification of a job waiting in the ``ResendBuffer`` to be sent to one token again.
public struct ResendEntry: Sendable, Hashable {
    /// The job the notification belongs to.
    public var jobID: String
    /// The device token to send to.
    public var token: DeviceToken
    /// APNs attempts made so far (0 when it was parked without being sent).
    public var attempts: Int
    /// When the first attempt failed, in milliseconds since 1970.
    public var firstFailedAt: Int64
    /// Why the last attempt failed, e.g. "ServiceUnavailable", "timeout".
    public var lastReason: String

    public init(jobID: String, token: DeviceToken, attempts: Int, firstFailedAt: Int64, lastReason: String) {
        self.jobID = jobID
        self.token = token
        self.attempts = attempts
        self.firstFailedAt = firstFailedAt
        self.lastReason = lastReason
    }
}
