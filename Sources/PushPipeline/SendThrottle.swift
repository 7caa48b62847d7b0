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

    /// One fleet-wide token bucket: the app's, or a job's inside it.
    struct Bucket: Hashable, Sendable {
        var ratePerSecond: Double
        var burst: Int
        /// `nil` for the app's bucket, `job:<jobID>` for a job's.
        var scope: String?
    }

    /// The throttling in force for one job of one app.
    struct Policy: Sendable {
        /// The buckets every notification takes a permit from: the app's (when it has a rate),
        /// then the job's (when it has one). A job's rate therefore nests inside its app's: it
        /// may go slower, never faster.
        var buckets: [Bucket]
        var sleepAfter: Int
        var sleepMilliseconds: Int
        /// Whose sends count towards a pause: the app, or the job when it overrides.
        var pauseKey: String

        /// - Parameter operatorRate: the rate an operator set for the running job
        ///   (``JobControl/ratePerSecond``); it replaces the job's `throttle.rate-per-second`.
        init(app: PushApp, jobID: String, override: ThrottleOverride?, operatorRate: Double? = nil) {
            let settings = app.settings
            buckets = []
            if settings.ratePerSecond > 0 {
                buckets.append(Bucket(ratePerSecond: settings.ratePerSecond, burst: settings.burst, scope: nil))
            }
            if let rate = operatorRate ?? override?.ratePerSecond {
                buckets.append(Bucket(ratePerSecond: rate, burst: AppSettings.defaultBurst(ratePerSecond: rate), scope: "job:\(jobID)"))
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
        if !policy.buckets.isEmpty {
            allowed = try await takePermits(app: app, buckets: policy.buckets, upTo: allowed)
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

    /// Takes `min(wanted, what every bucket has)` permits from each bucket, waiting until each
    /// has at least one. Permits fetched from one bucket beyond what another allowed stay in
    /// this worker's pool for the next call.
    private func takePermits(app: String, buckets: [Bucket], upTo wanted: Int) async throws -> Int {
        while true {
            for bucket in buckets {
                try await fill(app: app, bucket)
            }
            // No suspension point from here on: what the pools hold now is what is taken.
            let taken = buckets.reduce(wanted) { min($0, permits[BucketKey(app: app, scope: $1.scope)] ?? 0) }
            guard taken > 0 else { continue }
            for bucket in buckets {
                permits[BucketKey(app: app, scope: bucket.scope), default: 0] -= taken
            }
            return taken
        }
    }

    /// Waits until this worker holds at least one permit of `bucket`, fetching blocks from Redis.
    private func fill(app: String, _ bucket: Bucket) async throws {
        let key = BucketKey(app: app, scope: bucket.scope)
        while (permits[key] ?? 0) == 0 {
            let grant = try await limiter.acquire(
                app: app, scope: bucket.scope, ratePerSecond: bucket.ratePerSecond, burst: bucket.burst,
                requested: min(permitBlock, bucket.burst))
            permits[key, default: 0] += grant.granted
            if grant.granted == 0 {
                counters.add(.ratePermitWaits)
                try await Task.sleep(for: max(grant.retryAfter, .milliseconds(1)))
            }
        }
    }
}
