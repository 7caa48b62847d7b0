/// Worker concurrency and batching settings (`worker:`).
public struct WorkerSettings: Sendable, Equatable {
    /// Tokens per delivery chunk (`chunk-size`), 1...1000; default 1000.
    public var chunkSize: Int
    /// Chunks a worker processes concurrently (`chunks-in-flight`), ≥ 1; default 8.
    public var chunksInFlight: Int
    /// Notifications a worker has outstanding at APNs (`notifications-in-flight`), ≥ 1; default 2000.
    public var notificationsInFlight: Int
    /// Rate permits taken per Redis call (`permit-block`), ≥ 1; default 100.
    public var permitBlock: Int
    /// How often the resend queue is polled (`resend-poll-ms`), ≥ 1 ms; default 200 ms.
    public var resendPollInterval: Duration
    /// How long a process may take to stop after SIGTERM before its work is cancelled
    /// (`shutdown-deadline-seconds`), ≥ 1 s; default 30 s. Cancelled notifications wait in the
    /// resend buffer; orchestrators should allow a little more (a 45 s termination grace period).
    public var shutdownDeadline: Duration

    /// Creates worker settings; every parameter has the documented default.
    public init(
        chunkSize: Int = 1000, chunksInFlight: Int = 8, notificationsInFlight: Int = 2000, permitBlock: Int = 100,
        resendPollInterval: Duration = .milliseconds(200), shutdownDeadline: Duration = .seconds(30)
    ) {
        self.shutdownDeadline = shutdownDeadline
        self.chunkSize = chunkSize
        self.chunksInFlight = chunksInFlight
        self.notificationsInFlight = notificationsInFlight
        self.permitBlock = permitBlock
        self.resendPollInterval = resendPollInterval
    }
}
