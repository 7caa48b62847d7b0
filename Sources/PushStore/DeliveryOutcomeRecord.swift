import APNsCore

/// The final outcome of one token of a job, for ``JobStore/recordOutcomes(jobID:_:)``.
public struct DeliveryOutcomeRecord: Sendable, Hashable {
    /// The device token the outcome is for; its sent marker is added.
    public var token: DeviceToken
    /// The counter to increment, e.g. "accepted", "failed:BadTopic", "invalid", "retried",
    /// "dead-lettered": 1–128 bytes of UTF-8, no control characters.
    public var counter: String
    /// Whether the notification was sent to APNs (increments "sent" too).
    public var countsAsSent: Bool

    public init(token: DeviceToken, counter: String, countsAsSent: Bool) {
        self.token = token
        self.counter = counter
        self.countsAsSent = countsAsSent
    }
}
