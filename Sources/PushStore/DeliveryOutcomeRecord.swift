/// The final outcome of one position of a job, for ``JobStore/recordOutcomes(jobID:_:)``.
package struct DeliveryOutcomeRecord: Sendable, Hashable {
    /// The position of the token in the job's sent state (its device id, or its index in a
    /// token job's list); its sent marker is set.
    package var position: UInt32
    /// The counter to increment: ``JobCounter/accepted``, ``JobCounter/failed(reason:)``,
    /// ``JobCounter/retried``, ``JobCounter/deadLettered``, ``JobCounter/cancelled``.
    package var counter: JobCounter
    /// Whether the notification was sent to APNs (increments "sent" too).
    package var countsAsSent: Bool

    package init(position: UInt32, counter: JobCounter, countsAsSent: Bool) {
        self.position = position
        self.counter = counter
        self.countsAsSent = countsAsSent
    }
}
