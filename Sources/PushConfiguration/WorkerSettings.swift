/// Worker concurrency and batching settings (`worker:`).
public struct WorkerSettings: Sendable, Equatable {
    /// Tokens per delivery chunk (`chunk-size`), 1...1000; default 1000.
    public var chunkSize: Int
    /// Chunks a worker sends concurrently (`chunks-in-flight`), ≥ 1; default 32. A chunk holds its slot from its first admission to its last settlement, a round trip and the settling after it: 32 keep 85,000/s going at 200 ms.
    public var chunksInFlight: Int
    /// Messages of `push.jobs` a worker expands concurrently (`expansions-in-flight`): jobs, and
    /// the shard tasks of broadcasts and tag jobs, ≥ 1; default 1. One expansion at a time
    /// outpaces what a worker sends and leaves the send stage its share of the cores from the
    /// start: a 1,000,000-device broadcast on 2 cores reaches its plateau (54,000/s) half a second
    /// after publication, where 8 at a time held the first 2 s at 38,000–44,000/s. Raise it on
    /// workers that only expand (`--role expand`) or on many cores.
    public var expansionsInFlight: Int
    /// Notifications a worker has admitted and not yet settled (`notifications-in-flight`):
    /// waiting for a stream, at APNs, or answered and waiting for their sent markers; ≥ 1,
    /// default 32,000. A ceiling, not the operating point: what is admitted and unsettled is the
    /// rate times the time a notification spends between admission and settlement (Little's
    /// law: the round trip, a stream's wait for Apple's window, the settling: about 0.3 s at
    /// 200 ms, so 25,000 at 85,000/s), and what was sent of it is what a killed worker can
    /// leave to be sent twice. `chunks-in-flight` × `chunk-size` (32,000 by default) bounds it
    /// too.
    public var notificationsInFlight: Int
    /// How long a chunk's answers wait for the rest of their batch of 250 while it is still at
    /// APNs before they are settled (`settle-patience-ms`), ≥ 1 ms; default 30 ms. Answers never
    /// wait for notifications not yet handed to APNs (held back by the throttle or the window).
    /// Longer batches cost Redis fewer commands per notification (the sent markers and
    /// statistics are written per batch and range of the sent state) and leave more answered
    /// and unmarked for a killed worker's successor to send again (docs/faults.md); at full speed
    /// a batch is the chunk's share of the worker's rate times the patience.
    public var settlePatience: Duration
    /// Rate permits taken per Redis call (`permit-block`), ≥ 1; default 100.
    public var permitBlock: Int
    /// How often the resend queue is polled (`resend-poll-ms`), ≥ 1 ms; default 200 ms.
    public var resendPollInterval: Duration
    /// How long a process may take to stop after SIGTERM before its work is cancelled
    /// (`shutdown-deadline-seconds`), ≥ 1 s; default 30 s. Cancelled work is left for the next
    /// owner (uncommitted messages, expiring chunk leases) and the process exits 75, at most 5 s
    /// after the deadline; orchestrators should allow a little more (a 45 s termination grace
    /// period).
    public var shutdownDeadline: Duration

    /// Creates worker settings; every parameter has the documented default.
    public init(
        chunkSize: Int = 1000, chunksInFlight: Int = 32, expansionsInFlight: Int = 1, notificationsInFlight: Int = 32_000,
        permitBlock: Int = 100, resendPollInterval: Duration = .milliseconds(200), shutdownDeadline: Duration = .seconds(30),
        settlePatience: Duration = .milliseconds(30)
    ) {
        self.settlePatience = settlePatience
        self.shutdownDeadline = shutdownDeadline
        self.chunkSize = chunkSize
        self.chunksInFlight = chunksInFlight
        self.expansionsInFlight = expansionsInFlight
        self.notificationsInFlight = notificationsInFlight
        self.permitBlock = permitBlock
        self.resendPollInterval = resendPollInterval
    }
}
