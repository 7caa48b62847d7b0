import APNs
import APNsCore
import FlowControl
import Foundation
import Kafka
import Logging
import NIOCore
import PushConfiguration
import PushCore
import PushJobs
import PushStore
import Tracing

/// Sends a job's notifications to many tokens through the app's APNs client, admitted by the
/// throttle and bounded by the worker's in-flight window, and settles their outcomes by the
/// rules of ``Settlement``, a batch at a time as the answers arrive: statistics and sent markers,
/// registry changes through the job's gate (``HeldEffects``), dead letters, the resend buffer,
/// the app's suspension, the job's pause. While the circuit breaker watches the job it judges
/// each batch's statistics (``CampaignBreaker``), and clears or pauses the job.
///
/// Before each admission (at most ``settleBatch`` notifications) the job's control state is read
/// from Redis: a cancelled job's remaining tokens are settled as `cancelled`; a paused job's are
/// left without an outcome (the job is published again when it resumes); a suspended app's wait
/// in the resend buffer.
///
/// Side effects (registry changes, dead letters, resend entries) are written before the sent
/// markers, so a worker that dies in between sends again rather than loses.
///
/// The in-flight window (`worker.notifications-in-flight`) counts notifications from their
/// admission until their outcome is settled, not until APNs answers: it is the most a worker
/// holds sent without a sent marker, so what a killed worker can leave to be sent twice.
final class NotificationSender: Sendable {
    private let outlet: PipelineOutlet
    private let clients: [String: APNsClient]
    private let jobs: JobStore
    private let controls: JobControlCache
    private let suspensions: SuspensionCache
    private let resend: ResendBuffer
    private let hours: HourStatistics
    private let badges: BadgeStore
    private let registry: DeviceRegistry
    private let throttle: SendThrottle
    private let inFlight: AsyncPermits
    private let breaker: CampaignBreaker
    /// How long answers wait for the rest of their batch while it is at APNs
    /// (`worker.settle-patience-ms`).
    private let settlePatience: Duration

    init(
        outlet: PipelineOutlet, clients: [String: APNsClient], jobs: JobStore, controls: JobControlCache, suspensions: SuspensionCache,
        resend: ResendBuffer, hours: HourStatistics, badges: BadgeStore, registry: DeviceRegistry, limiter: RateLimiter,
        worker: WorkerSettings, breaker: BreakerSettings
    ) {
        self.outlet = outlet
        self.clients = clients
        self.jobs = jobs
        self.controls = controls
        self.suspensions = suspensions
        self.resend = resend
        self.hours = hours
        self.badges = badges
        self.registry = registry
        self.throttle = SendThrottle(limiter: limiter, permitBlock: worker.permitBlock, counters: outlet.counters)
        self.inFlight = AsyncPermits(worker.notificationsInFlight)
        self.breaker = CampaignBreaker(settings: breaker)
        self.settlePatience = worker.settlePatience
    }

    /// Notifications admitted whose outcome is not settled yet: what a worker stopping now
    /// leaves to be sent again.
    var notificationsInFlight: Int { inFlight.inUse }

    /// Why sending a batch of deliveries stopped before its end.
    private enum Stop {
        case cancelled
        case paused
        case suspended(reason: String)
        case stopping

        /// The stop a job's control state calls for; `nil` while it runs.
        init?(_ control: JobControl) {
            switch control.state {
            case .running: return nil
            case .paused: self = .paused
            case .cancelled: self = .cancelled
            }
        }
    }

    /// Outcomes settled (markers written) per batch while a chunk's answers arrive, and
    /// notifications admitted between two checks of the job's state: a job paused mid-chunk
    /// stops within this many.
    static let settleBatch = 250

    /// Sends `job` to `deliveries` and settles every outcome as the answers arrive, up to
    /// ``settleBatch`` at a time.
    /// `tags`: those the job addressed (``Audience/addressedTags`` of the job as published),
    /// whose hour-of-day statistics count the sends too.
    func deliver(_ deliveries: [Delivery], of job: PushJob, jobID: String, app: PushApp, tags: [String]) async throws {
        guard !deliveries.isEmpty else { return }
        guard let client = clients[app.id] else {
            preconditionFailure("every configured app has an APNs client")
        }
        // The notification every device of the chunk gets (its device token is each one's).
        let notification = job.apnsRequest(for: app, token: deliveries[0].token, jobID: jobID)
        let counters = outlet.counters
        let facts = Settlement.Facts(
            app: app.id, jobID: jobID, environment: job.environment, kind: job.tokenKind,
            usesOwnTopic: job.usesOwnTopic(bundleID: app.settings.bundleID), now: 0, suspension: suspensions.duration)
        let outcomes = SendResultQueue()
        let badges = try await KeptBadges.of(
            job, deliveries: deliveries, app: app.id, store: self.badges, registry: registry, logger: outlet.logger)
        // Sending and settling run side by side. A notification keeps its slot of the in-flight
        // window until its outcome is settled (its sent marker written), so the window bounds
        // what a worker that dies can leave sent and unmarked: what is sent again after a crash.
        async let sending = send(
            deliveries, as: notification, badges: badges, of: job, jobID: jobID, app: app, through: client, into: outcomes)
        var firstError: (any Error)?
        var sentCount = 0
        while let arrived = await outcomes.next(upTo: Self.settleBatch, orAfter: settlePatience) {
            var batch: [(Delivery, SendResult)] = []
            batch.reserveCapacity(arrived.count)
            for (index, result) in arrived {
                if result.wasSent { counters.add(.notificationsSent) }
                batch.append((deliveries[index], result))
            }
            if firstError == nil {
                do {
                    sentCount += try await settle(batch, of: job, facts: facts)
                } catch {
                    firstError = error
                }
            }
            inFlight.release(arrived.count)
        }
        let (sent, stop) = await sending
        if let firstError { throw firstError }
        try await countSentHour(sentCount, app: app, tags: tags)
        let unsent: SendResult?
        switch stop {
        case .cancelled: unsent = .cancelled
        case .paused: unsent = nil
        case .suspended(let reason): unsent = .notSent(reason: "suspended: \(reason)")
        case .stopping: unsent = .notSent(reason: "worker-stopping")
        }
        guard sent < deliveries.count else { return }
        if let unsent {
            try await settle(deliveries[sent...].map { ($0, unsent) }, of: job, facts: facts)
        } else {
            counters.add(.leftForResume, deliveries.count - sent)
        }
    }

    /// Hands `deliveries` to `client` as the throttle admits them, each with its slot of the
    /// in-flight window (returned by the settling side), until the end or a stop; each outcome
    /// goes to `outcomes` by its index. Answers how many were handed over, and why it stopped
    /// when that is not all of them. With `badges`, each device's payload carries its number:
    /// the rest of the chunk is counted once its first batch is admitted, and what was counted
    /// and not handed over when sending stops early is taken back (a later send counts it again).
    private func send(
        _ deliveries: [Delivery], as notification: APNsRequest, badges: KeptBadges?, of job: PushJob, jobID: String, app: PushApp,
        through client: APNsClient, into outcomes: SendResultQueue
    ) async -> (sent: Int, stop: Stop) {
        let inFlight = self.inFlight
        let metrics = outlet.metrics
        let latency = metrics.apnsLatency(app: app.id)
        let controls = self.controls
        let binary = app.settings.transport == .binary
        var stop = Stop.stopping
        var next = 0
        var counted: KeptBadges.Counted?
        await withTaskGroup(of: Void.self) { group in
            sending: while next < deliveries.count {
                do {
                    // Read afresh before every admission: a notification admitted after a pause
                    // or cancel was written is never sent.
                    let control = try await controls.fresh(jobID)
                    if let halt = Stop(control) {
                        stop = halt
                        break
                    }
                    if let reason = try await suspensions.reason(app: app.id, environment: job.environment) {
                        stop = .suspended(reason: reason)
                        break
                    }
                    let policy = SendThrottle.Policy(app: app, jobID: jobID, override: job.throttle, operatorRate: control.ratePerSecond)
                    let requested = min(deliveries.count - next, Self.settleBatch)
                    let admitted = try await throttle.admit(app: app.id, policy: policy, requested: requested)
                    // The admitted notifications go to the client as one batch (or a few, when
                    // the in-flight window is smaller), each with its slots of the window.
                    let end = next + admitted
                    while next < end {
                        let size = min(end - next, inFlight.capacity)
                        try await inFlight.acquire(size)
                        // While this waited for slots, another batch may have learnt that the job stopped.
                        if let known = controls.cached(jobID), let halt = Stop(known) {
                            inFlight.release(size)
                            stop = halt
                            break sending
                        }
                        let first = next
                        var payloads: [ByteBuffer]?
                        if let badges {
                            do {
                                if counted == nil {
                                    counted = try await badges.count(first..<deliveries.count, app: app.id, jobID: jobID, logger: outlet.logger)
                                }
                                payloads = counted?.payloads(first..<(first + size))
                            } catch {
                                inFlight.release(size)
                                throw error
                            }
                        }
                        metrics.sendStarted(size)
                        outcomes.handOver(size)
                        let tokens = deliveries[first..<(first + size)].map(\.token)
                        let batchPayloads = payloads
                        let start = ContinuousClock.now
                        group.addTask {
                            await withSpan("apns batch", ofKind: .client) { span in
                                // Answers are tallied by status for the span only when it records.
                                let statuses = span.isRecording ? APNsStatusTally() : nil
                                let onResult: @Sendable (Int, Result<APNsResponse, APNsError>) -> Void = { index, result in
                                    metrics.sendFinished(after: .now - start, latency: latency)
                                    statuses?.add(result)
                                    switch result {
                                    case .success(let response): outcomes.add(first + index, .response(response))
                                    case .failure(let error): outcomes.add(first + index, .failure(error))
                                    }
                                }
                                if binary {
                                    await client.sendOverBinaryInterface(notification, to: tokens, payloads: batchPayloads, onResult: onResult)
                                } else {
                                    await client.send(notification, to: tokens, payloads: batchPayloads, onResult: onResult)
                                }
                                if let statuses {
                                    span.attributes["pushfleet.app"] = app.id
                                    span.attributes["pushfleet.job"] = jobID
                                    span.attributes["pushfleet.notifications"] = tokens.count
                                    statuses.record(on: span)
                                }
                            }
                        }
                        next = first + size
                    }
                } catch {
                    // Cancelled, or Redis is away while stopping: what is not sent waits for a resend.
                    outlet.logger.warning("stopped sending a batch", metadata: ["error": "\(error)", "app": "\(app.id)"])
                    stop = .stopping
                    break
                }
            }
            // Before the group waits for the client: the settling side learns the total now.
            outcomes.expect(next)
        }
        if let badges, let counted, next < deliveries.count {
            do {
                try await badges.revoke(counted, from: next, app: app.id, jobID: jobID, logger: outlet.logger)
            } catch {
                // Stopping: the chunk is sent again by the partition's next owner, with the same numbers.
                outlet.logger.warning(
                    "left the badge counts of \(deliveries.count - next) notification(s) not sent",
                    metadata: ["error": "\(error)", "job": "\(jobID)"])
            }
        }
        return (next, stop)
    }

    // MARK: - Settling

    /// Carries out the plan for a batch of outcomes (``Settlement``): its steps in their order
    /// (``Settlement/steps(_:)``), the breaker's judgement last.
    /// Answers how many of them count as sent.
    @discardableResult
    private func settle(_ outcomes: [(Delivery, SendResult)], of job: PushJob, facts template: Settlement.Facts) async throws -> Int {
        guard !outcomes.isEmpty else { return 0 }
        var facts = template
        facts.now = outlet.clock()
        let plan = Settlement.plan(outcomes, facts: facts)
        for (key, count) in plan.metrics {
            outlet.metrics.outcome(app: facts.app, outcome: key.outcome, reason: key.reason, count: count)
        }
        for (name, count) in plan.workerCounts {
            outlet.counters.add(name, count)
        }
        var positions: [DeviceToken: UInt32] = [:]
        for (delivery, _) in outcomes {
            if let position = delivery.position { positions[delivery.token] = position }
        }
        try await Settlement.carryOut(
            Settlement.steps(plan), positions: positions, facts: facts, through: Effects(sender: self, facts: facts))
        return plan.sentCount
    }

    /// Adds a chunk's sent notifications to the app's hour-of-day statistics (and those of the
    /// tags the job addressed), once per chunk: two commands per 1,000 notifications.
    private func countSentHour(_ count: Int, app: PushApp, tags: [String]) async throws {
        guard count > 0 else { return }
        let (hours, timeZone) = (self.hours, app.settings.statisticsTimeZone)
        let now = Date(timeIntervalSince1970: Double(outlet.clock()) / 1000)
        try await Retrying.run("counting \(count) sent notification(s) of app \(app.id) into their hour", logger: outlet.logger) {
            try await hours.add(count, .sent, app: app.id, tags: tags, at: now, in: timeZone)
        }
    }

    /// The settlement's steps over Redis and Kafka, each retried while Redis is away.
    private struct Effects: SettlementEffects {
        let sender: NotificationSender
        let facts: Settlement.Facts
        var outlet: PipelineOutlet { sender.outlet }

        func pauseJob(reason: String) async throws {
            try await sender.pause(
                jobID: facts.jobID, app: facts.app,
                reason:
                    "APNs refused the whole request with \(reason): the job's topic, push type, headers or payload, or the app's credential, is wrong for every device"
            )
        }

        func suspendApp(reason: String) async throws {
            let (app, environment) = (facts.app, facts.environment)
            outlet.counters.add(.providerSuspensions)
            let suspensions = sender.suspensions
            let isNew = suspensions.hold(app: app, environment: environment, reason: reason)
            try await Retrying.run("suspending app \(app) in \(environment.rawValue)", logger: outlet.logger) {
                try await suspensions.suspendFleetWide(app: app, environment: environment, reason: reason)
            }
            outlet.logger.log(
                level: isNew ? .error : .debug,
                "APNs refused the \(environment.rawValue) credential of app \(app) (\(reason)): its sending to \(environment.rawValue) is suspended fleet-wide for \(suspensions.duration); the rest of its audience there waits in the resend buffer. Fix the app's key or certificate (`pushfleet credentials check --app \(app)`).",
                metadata: ["app": "\(app)", "environment": "\(environment.rawValue)", "job": "\(facts.jobID)"])
        }

        func offerRegistryChanges(_ changes: [FeedbackEvent]) async throws {
            let (effects, jobID) = (outlet.heldEffects, facts.jobID)
            let answer = try await Retrying.run("offering \(changes.count) registry change(s) of job \(jobID)", logger: outlet.logger) {
                try await effects.offer(jobID: jobID, changes)
            }
            if try await sender.controls.current(jobID).state != answer.state {
                sender.controls.invalidate(jobID)
            }
        }

        func scheduleResends(
            _ failures: [ResendFailure], positions: [DeviceToken: UInt32]
        ) async throws -> (scheduled: [ResendFailure], expired: [ResendEntry], givenUp: [ResendTally]) {
            let (outlet, jobs, resend, jobID, app) = (self.outlet, sender.jobs, sender.resend, facts.jobID, facts.app)
            let checked = Settlement.positionsToCheck(failures, positions: positions)
            let (selection, answer) = try await Retrying.run("scheduling \(failures.count) resend(s)", logger: outlet.logger) {
                let flags = checked.isEmpty ? [] : try await jobs.hasMarkers(jobID: jobID, positions: checked)
                let marked = Set(zip(checked, flags).compactMap { $1 ? $0 : nil })
                let selection = Settlement.resendsToSchedule(failures, positions: positions, marked: marked)
                let counted = Settlement.countedByTheBuffer(selection.toSchedule, positions: positions)
                return (selection, try await resend.schedule(app: app, selection.toSchedule, countingGivenUp: counted))
            }
            try await outlet.skippedDuplicates(
                selection.settledElsewhere, jobID: jobID, "resends settled by another worker meanwhile: not buffered")
            return (selection.toSchedule, answer.expired, answer.tallies)
        }

        func deadLetter(_ letters: [DeadLetter], givenUp: [ResendTally]) async throws {
            try await outlet.deadLetterNotifications(letters, jobID: facts.jobID)
            let completion = ResendCompletion(resend: sender.resend, jobs: sender.jobs, logger: outlet.logger)
            for tally in givenUp { try await completion.count(tally, app: facts.app) }
        }

        func countRetried(_ retried: Int) {
            outlet.counters.add(.retried, retried)
        }

        func recordOutcomes(_ records: [DeliveryOutcomeRecord]) async throws {
            let (jobs, jobID) = (sender.jobs, facts.jobID)
            _ = try await Retrying.run("recording \(records.count) outcome(s) of job \(jobID)", logger: outlet.logger) {
                try await jobs.recordOutcomes(jobID: jobID, records)
            }
        }

        func completeResends(_ finished: [Settlement.FinishedResend]) async throws {
            let (jobs, jobID) = (sender.jobs, facts.jobID)
            let removed = try await ResendCompletion(resend: sender.resend, jobs: jobs, logger: outlet.logger).complete(
                app: facts.app, jobID: jobID, finished.map(\.entry), counting: finished.map { $0.sent ? [$0.counter, .sent] : [$0.counter] })
            // A resend has no position in the sent state: a recall of the job finds these here.
            let accepted = zip(finished, removed).filter { $0.1 && $0.0.counter == .accepted }.map(\.0.entry.token)
            if !accepted.isEmpty {
                try await Retrying.run("recording \(accepted.count) accepted resend(s) of job \(jobID)", logger: outlet.logger) {
                    try await jobs.recordAcceptedResends(jobID: jobID, tokens: accepted)
                }
            }
        }

        func judge() async throws {
            try await sender.judge(jobID: facts.jobID, app: facts.app)
        }
    }

    /// While the breaker watches the job: judges its statistics so far, then clears the job
    /// (releasing its held registry changes) or pauses it.
    private func judge(jobID: String, app: String) async throws {
        let control = try await controls.current(jobID)
        guard control.state == .running, control.breaker == .watching else { return }
        let counters = try await Retrying.run("reading statistics of job \(jobID)", logger: outlet.logger) {
            try await jobs.statistics(jobID: jobID)
        }
        switch breaker.verdict(JobReport(jobID: jobID, counters: counters, control: control)) {
        case .watching:
            return
        case .clear:
            let update = try await Retrying.run("clearing job \(jobID)", logger: outlet.logger) {
                try await jobs.update(jobID: jobID, .clear)
            }
            controls.remember(jobID, update.after)
            if update.changed {
                outlet.counters.add(.jobsCleared)
                outlet.logger.info("circuit breaker cleared the job: its registry changes apply", metadata: ["job": "\(jobID)", "app": "\(app)"])
            }
            if update.after.gate == .apply {
                let effects = outlet.heldEffects
                let released = try await Retrying.run("releasing held registry changes of job \(jobID)", logger: outlet.logger) {
                    try await effects.release(jobID: jobID)
                }
                outlet.counters.add(.effectsReleased, released)
            }
        case .trip(let reason):
            try await pause(jobID: jobID, app: app, reason: reason)
        }
    }

    /// Pauses the job fleet-wide for the breaker, loudly, unless it is paused or cancelled already.
    private func pause(jobID: String, app: String, reason: String) async throws {
        let now = outlet.clock()
        let update = try await Retrying.run("pausing job \(jobID)", logger: outlet.logger) {
            try await jobs.update(jobID: jobID, .trip(reason: reason, at: now))
        }
        controls.remember(jobID, update.after)
        guard update.changed else { return }
        outlet.counters.add(.jobsPaused)
        outlet.metrics.jobStopped(app: app, by: JobControl.Actor.breaker.rawValue, state: JobControl.State.paused.rawValue)
        outlet.logger.error(
            "job \(jobID) of app \(app) paused: \(reason). Nothing its answers call for is applied to the device registry while it is paused. Decide with `pushfleet jobs resume \(jobID)` (the answers are genuine) or `pushfleet jobs abort \(jobID)`.",
            metadata: ["job": "\(jobID)", "app": "\(app)"])
    }
}
