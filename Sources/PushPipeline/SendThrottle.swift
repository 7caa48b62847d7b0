import PushConfiguration
import PushCore
import PushStore

/// Admission of one worker's sends: fleet-wide rate permits, fetched from Redis in blocks, and
/// sleep-after-N pauses (after every N notifications of an app, or of a job that overrides the
/// app's setting, the worker pauses S milliseconds).
///
/// Senders ask for many notifications at once and get a number they may send now; the waiting
/// happens here, so it is counted (``WorkerCounters/Name/ratePermitWaits``,
/// ``WorkerCounters/Name/sleepPauses``).
actor SendThrottle {
    private struct BucketKey: Hashable {
        var app: String
        var scope: String?
    }

    private struct PauseState {
        var sentSincePause = 0
        var pausedUntil: ContinuousClock.Instant?
    }

    /// The throttling in force for one job of one app.
    struct Policy: Sendable {
        var ratePerSecond: Double
        var burst: Int
        /// The rate bucket's scope: `nil` for the app's bucket, the job id for a job override.
        var rateScope: String?
        var sleepAfter: Int
        var sleepMilliseconds: Int
        /// Whose sends count towards a pause: the app, or the job when it overrides.
        var pauseKey: String

        init(app: PushApp, jobID: String, override: ThrottleOverride?) {
            let settings = app.settings
            if let rate = override?.ratePerSecond {
                ratePerSecond = rate
                burst = max(1, Int(rate.rounded(.up)))
                rateScope = "job:\(jobID)"
            } else {
                ratePerSecond = settings.ratePerSecond
                burst = settings.burst
                rateScope = nil
            }
            sleepAfter = override?.sleepAfter ?? settings.sleepAfter
            sleepMilliseconds = override?.sleepMilliseconds ?? settings.sleepMilliseconds
            let overridesPause = override?.sleepAfter != nil || override?.sleepMilliseconds != nil
            pauseKey = overridesPause ? "\(app.id)/\(jobID)" : app.id
        }
    }

    private let limiter: RateLimiter
    private let permitBlock: Int
    private let counters: WorkerCounters
    private var permits: [BucketKey: Int] = [:]
    private var pauses: [String: PauseState] = [:]

    init(limiter: RateLimiter, permitBlock: Int, counters: WorkerCounters) {
        self.limiter = limiter
        self.permitBlock = permitBlock
        self.counters = counters
    }

    /// Waits until at least one of `requested` notifications may be sent and returns how many
    /// (1...requested).
    func admit(app: String, policy: Policy, requested: Int) async throws -> Int {
        precondition(requested > 0)
        var allowed = requested
        let pausing = policy.sleepAfter > 0 && policy.sleepMilliseconds > 0
        if pausing {
            while let until = pauses[policy.pauseKey]?.pausedUntil, until > .now {
                try await Task.sleep(until: until)
            }
            let sent = pauses[policy.pauseKey]?.sentSincePause ?? 0
            allowed = min(allowed, max(1, policy.sleepAfter - sent))
        }
        if policy.ratePerSecond > 0 {
            allowed = try await takePermits(app: app, policy: policy, upTo: allowed)
        }
        if pausing {
            var state = pauses[policy.pauseKey] ?? PauseState()
            state.sentSincePause += allowed
            if state.sentSincePause >= policy.sleepAfter {
                state.sentSincePause = 0
                state.pausedUntil = .now + .milliseconds(policy.sleepMilliseconds)
                counters.add(.sleepPauses)
            }
            pauses[policy.pauseKey] = state
        }
        return allowed
    }

    private func takePermits(app: String, policy: Policy, upTo wanted: Int) async throws -> Int {
        let key = BucketKey(app: app, scope: policy.rateScope)
        while (permits[key] ?? 0) == 0 {
            let grant = try await limiter.acquire(
                app: app,
                scope: policy.rateScope,
                ratePerSecond: policy.ratePerSecond,
                burst: policy.burst,
                requested: min(permitBlock, policy.burst))
            permits[key, default: 0] += grant.granted
            if grant.granted == 0 {
                counters.add(.ratePermitWaits)
                try await Task.sleep(for: max(grant.retryAfter, .milliseconds(1)))
            }
        }
        let available = permits[key] ?? 0
        let taken = min(wanted, available)
        permits[key] = available - taken
        return taken
    }
}
