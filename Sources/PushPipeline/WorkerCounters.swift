import CoreMetrics
import Synchronization

/// What one worker process did since it started: the figures behind its log lines and the
/// tests' observations (throttling is checked through ``sleepPauses`` and ``ratePermitWaits``,
/// never through wall-clock timing).
public final class WorkerCounters: Sendable {
    /// A counter's name, as ``snapshot()`` reports it.
    public enum Name: String, CaseIterable, Sendable {
        case jobsExpanded = "jobs-expanded"
        case jobsScheduled = "jobs-scheduled"
        case jobsReleased = "jobs-released"
        case shardTasks = "shard-tasks"
        case chunksPublished = "chunks-published"
        case chunksSent = "chunks-sent"
        case routedOnline = "routed-online"
        /// Online-only messages kept in the inbox of a device not connected when they were sent,
        /// or not acknowledged in time.
        case inboxed
        /// Inbox entries dropped to keep an inbox within `gateway.inbox-size`.
        case inboxDropped = "inbox-dropped"
        case notificationsSent = "notifications-sent"
        case accepted
        case tokensUnregistered = "tokens-unregistered"
        case tokensRejected = "tokens-rejected"
        case permanentFailures = "permanent-failures"
        case retried
        case resent
        case deadLetteredNotifications = "dead-lettered-notifications"
        case deadLetteredMessages = "dead-lettered-messages"
        case duplicatesSkipped = "duplicates-skipped"
        case chunkLeaseWaits = "chunk-lease-waits"
        case ratePermitWaits = "rate-permit-waits"
        case sleepPauses = "sleep-pauses"
        case providerSuspensions = "provider-suspensions"
        case feedbackRemoved = "feedback-removed"
        case feedbackKept = "feedback-kept"
        case feedbackKeptAside = "feedback-kept-aside"
        case feedbackMoved = "feedback-moved"
        case probes
        case jobsPaused = "jobs-paused"
        case jobsCleared = "jobs-cleared"
        case chunksLeftForResume = "chunks-left-for-resume"
        case expansionsLeftForResume = "expansions-left-for-resume"
        case leftForResume = "left-for-resume"
        case effectsReleased = "effects-released"
        case jobsCancelled = "jobs-cancelled"
        case cancelledNotifications = "cancelled-notifications"
        case duplicateJobs = "duplicate-jobs"
    }

    private let values = Mutex([Int](repeating: 0, count: Name.allCases.count))
    /// The same figures as `pushfleet_worker_events_total{event}` (swift-metrics).
    private let series: [CoreMetrics.Counter]

    public init() {
        series = Name.allCases.map { CoreMetrics.Counter(label: "pushfleet_worker_events_total", dimensions: [("event", $0.rawValue)]) }
    }

    public func add(_ name: Name, _ amount: Int = 1) {
        guard amount != 0 else { return }
        let index = Self.index(of: name)
        values.withLock { $0[index] += amount }
        series[index].increment(by: amount)
    }

    public subscript(_ name: Name) -> Int {
        let index = Self.index(of: name)
        return values.withLock { $0[index] }
    }

    /// Every counter by name.
    public func snapshot() -> [String: Int] {
        var result: [String: Int] = [:]
        for name in Name.allCases {
            result[name.rawValue] = self[name]
        }
        return result
    }

    private static let indexes = Dictionary(uniqueKeysWithValues: Name.allCases.enumerated().map { ($1, $0) })

    private static func index(of name: Name) -> Int {
        indexes[name] ?? 0
    }
}
