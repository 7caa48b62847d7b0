import APNsCore

/// The final outcome of one token of a job, for ``JobStore/recordOutcomes(jobID:_:)``.
public struct DeliveryOutcomeRecord: Sendable, Hashable {
    /// The device token the outcome is for; its sent marker is added.
    public var token: DeviceToken
    /// The counter to increment: ``JobCounter/accepted``, ``JobCounter/failed(reason:)``,
    /// ``JobCounter/retried``, ``JobCounter/deadLettered``, ``JobCounter/cancelled``.
    public var counter: JobCounter
    /// Whether the notification was sent to APNs (increments "sent" too).
    public var countsAsSent: Bool

    public init(token: DeviceToken, counter: JobCounter, countsAsSent: Bool) {
        self.token = token
        self.counter = counter
        self.countsAsSent = countsAsSent
    }
}
