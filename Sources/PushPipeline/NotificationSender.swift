import APNs
import APNsCore
import Kafka
import Logging
import NIOCore
import PushConfiguration
import PushCore
import PushStore

/// Sends a job's notifications to many tokens through the app's APNs client, admitted by the
/// throttle and bounded by the worker's in-flight window, then settles every outcome:
///
/// - accepted → statistics;
/// - invalid token → `push.feedback`;
/// - permanent failure → `push.dlq` with APNs's reason;
/// - retryable (and not sent) → the resend buffer, or `push.dlq` once it gave up;
/// - provider-authentication problem → the app is suspended fleet-wide, loudly, and the rest of
///   its audience waits in the resend buffer instead of being burnt;
/// - job cancelled → what is not sent yet is settled as `cancelled`, never sent.
///
/// Side effects (feedback, dead letters, resend entries) are written before the sent markers,
/// so a worker that dies in between sends again rather than loses.
final class NotificationSender: Sendable {
    private let context: PipelineContext
    private let clients: [String: APNsClient]
    private let throttle: SendThrottle
    private let inFlight: AsyncPermits

    init(context: PipelineContext, clients: [String: APNsClient]) {
        self.context = context
        self.clients = clients
        self.throttle = SendThrottle(
            limiter: context.limiter, permitBlock: context.configuration.worker.permitBlock, counters: context.counters)
        self.inFlight = AsyncPermits(context.configuration.worker.notificationsInFlight)
    }

    /// Outcomes settled (markers written) per batch while a chunk's answers arrive: a worker
    /// that dies or loses its partitions mid-chunk leaves fewer tokens to be sent again.
    static let settleBatch = 250

    /// Sends `job` to `deliveries` and settles every outcome, ``settleBatch`` at a time as the
    /// answers arrive.
    func deliver(_ deliveries: [Delivery], of job: PushJob, jobID: String, app: PushApp) async throws {
        guard !deliveries.isEmpty else { return }
        guard let client = clients[app.id] else {
            preconditionFailure("every configured app has an APNs client")
        }
        let policy = SendThrottle.Policy(app: app, jobID: jobID, override: job.throttle)
        let payload = ByteBuffer(bytes: job.notification.payloadData())
        let headers = job.headers
        var template = APNsRequest(
            credential: app.credential,
            environment: job.environment,
            deviceToken: deliveries[0].token,
            bundleID: app.settings.bundleID,
            pushType: headers.pushType,
            priority: headers.effectivePriority,
            expiration: headers.expiration.map(Int64.init),
            collapseID: headers.collapseID,
            payload: payload)
        if let topic = headers.topic {
            template.topic = topic
        }
        let inFlight = self.inFlight
        let counters = context.counters
        let metrics = context.metrics
        // The group's leftover outcomes (the last partial batch and what was not sent), or the
        // first settling failure.
        let leftover = await withTaskGroup(of: (Int, SendResult).self) { group -> Result<[(Delivery, SendResult)], any Error> in
            var notSent = SendResult.notSent(reason: "worker-stopping")
            var next = 0
            while next < deliveries.count {
                do {
                    if try await context.cancellations.isCancelled(jobID) {
                        notSent = .cancelled
                        break
                    }
                    if let reason = try await context.suspensions.reason(app: app.id) {
                        notSent = .notSent(reason: "suspended: \(reason)")
                        break
                    }
                    let admitted = try await throttle.admit(app: app.id, policy: policy, requested: deliveries.count - next)
                    for index in next..<(next + admitted) {
                        await inFlight.acquire()
                        metrics.sendStarted()
                        var request = template
                        request.deviceToken = deliveries[index].token
                        group.addTask {
                            let start = ContinuousClock.now
                            defer {
                                metrics.sendFinished(app: app.id, after: .now - start)
                                inFlight.release()
                            }
                            do {
                                return (index, .response(try await client.send(request)))
                            } catch let error as APNsError {
                                return (index, .failure(error))
                            } catch {
                                return (index, .failure(APNsError(.cancelled, underlying: error)))
                            }
                        }
                    }
                    next += admitted
                } catch {
                    // Cancelled, or Redis is away while stopping: what is not sent waits for a resend.
                    context.logger.warning("stopped sending a batch", metadata: ["error": "\(error)", "app": "\(app.id)"])
                    break
                }
            }
            var batch: [(Delivery, SendResult)] = []
            batch.reserveCapacity(Self.settleBatch)
            var firstError: (any Error)?
            for await (index, result) in group {
                if result.wasSent { counters.add(.notificationsSent) }
                batch.append((deliveries[index], result))
                if batch.count >= Self.settleBatch && firstError == nil {
                    do {
                        try await settle(batch, of: job, jobID: jobID, app: app)
                    } catch {
                        firstError = error
                    }
                    batch.removeAll(keepingCapacity: true)
                }
            }
            if let firstError { return .failure(firstError) }
            for index in next..<deliveries.count {
                batch.append((deliveries[index], notSent))
            }
            return .success(batch)
        }
        try await settle(try leftover.get(), of: job, jobID: jobID, app: app)
    }

    // MARK: - Settling

    private func settle(_ outcomes: [(Delivery, SendResult)], of job: PushJob, jobID: String, app: PushApp) async throws {
        let now = context.clock()
        let counters = context.counters
        var feedback: [KafkaProducerMessage] = []
        var letters: [DeadLetter] = []
        var failures: [ResendFailure] = []
        // Counters of first sends, gated by the sent markers; and of resends, gated by the
        // resend buffer's entries.
        var records: [DeliveryOutcomeRecord] = []
        var finished: [(entry: ResendEntry, counter: String, sent: Bool)] = []
        var authFailure: String?

        var outcomeCounts: [String: [String: Int]] = [:]
        defer {
            for (outcome, reasons) in outcomeCounts {
                for (reason, count) in reasons {
                    context.metrics.outcome(app: app.id, outcome: outcome, reason: reason, count: count)
                }
            }
        }
        for (delivery, result) in outcomes {
            let reason = result.reason
            if case .cancelled = result {
                outcomeCounts["cancelled", default: [:]]["cancelled", default: 0] += 1
            } else {
                outcomeCounts[result.responseClass.rawValue, default: [:]][reason, default: 0] += 1
            }
            if case .cancelled = result {
                counters.add(.cancelledNotifications)
                record("cancelled", sent: false)
                continue
            }
            switch result.responseClass {
            case .success:
                counters.add(.accepted)
                if delivery.resendEntry != nil { counters.add(.resent) }
                record("accepted", sent: true)
            case .invalidToken:
                counters.add(.invalidTokens)
                var invalidSince = now
                if case .response(let response) = result, let timestamp = response.timestamp {
                    invalidSince = timestamp
                }
                let event = FeedbackEvent(
                    app: app.id, token: delivery.token, environment: job.environment, reason: reason,
                    invalidSince: invalidSince, jobID: jobID)
                feedback.append(KafkaProducerMessage(topic: PushTopic.feedback, key: "\(app.id)/\(delivery.token.hex)", value: event.jsonData()))
                record("failed:\(reason)", sent: true)
            case .permanent:
                counters.add(.permanentFailures)
                letters.append(letter(for: delivery, result: result, job: job, jobID: jobID, app: app, now: now))
                record("failed:\(reason)", sent: true)
            case .providerAuthentication, .retryable:
                if result.responseClass == .providerAuthentication {
                    authFailure = authFailure ?? reason
                }
                failures.append(
                    ResendFailure(
                        jobID: jobID,
                        token: delivery.token,
                        attempts: delivery.previousAttempts + result.attempts,
                        firstFailedAt: delivery.resendEntry?.firstFailedAt ?? now,
                        reason: reason,
                        retryAfter: result.responseClass == .providerAuthentication ? SuspensionCache.duration : nil))
            }

            func record(_ counter: String, sent: Bool) {
                if let entry = delivery.resendEntry {
                    finished.append((entry, counter, sent))
                } else {
                    records.append(DeliveryOutcomeRecord(token: delivery.token, counter: counter, countsAsSent: sent))
                }
            }
        }

        if let authFailure {
            counters.add(.providerSuspensions)
            context.logger.error(
                "APNs refused the credential of app \(app.id) (\(authFailure)): its sending is suspended fleet-wide for \(SuspensionCache.duration); the rest of its audience waits in the resend buffer. Fix the app's key or certificate.",
                metadata: ["app": "\(app.id)", "job": "\(jobID)"])
            try await Retrying.run("suspending app \(app.id)", logger: context.logger) {
                try await context.suspensions.suspend(app: app.id, reason: authFailure)
            }
        }

        try await context.publish(feedback, "\(feedback.count) feedback event(s)")
        let expired = try await Retrying.run("scheduling \(failures.count) resend(s)", logger: context.logger) {
            try await context.resend.schedule(app: app.id, failures)
        }
        let expiredTokens = Set(expired.map(\.token))
        for entry in expired {
            letters.append(
                DeadLetter(
                    reason: "resend-expired",
                    message: "gave up after \(entry.attempts) attempt(s); last reason \(entry.lastReason)",
                    app: app.id, jobID: jobID, token: entry.token.hex, attempts: entry.attempts, deadLetteredAt: now))
        }
        try await context.deadLetter(letters)
        counters.add(.deadLetteredNotifications, letters.count)

        // Retryable outcomes: a first send is recorded as retried (or dead-lettered when the
        // buffer gave up at once); a resend that gave up was removed by `schedule`.
        let resentTokens = Set(outcomes.compactMap { $0.0.resendEntry?.token })
        var resendsGivenUp = 0
        for failure in failures {
            let gaveUp = expiredTokens.contains(failure.token)
            if resentTokens.contains(failure.token) {
                resendsGivenUp += gaveUp ? 1 : 0
            } else {
                if !gaveUp { counters.add(.retried) }
                records.append(
                    DeliveryOutcomeRecord(
                        token: failure.token, counter: gaveUp ? "dead-lettered" : "retried", countsAsSent: failure.attempts > 0))
            }
        }
        if resendsGivenUp > 0 {
            try await increment(["dead-lettered": resendsGivenUp], jobID: jobID)
        }

        if !records.isEmpty {
            _ = try await Retrying.run("recording \(records.count) outcome(s) of job \(jobID)", logger: context.logger) {
                try await context.jobs.recordOutcomes(jobID: jobID, records)
            }
        }
        if !finished.isEmpty {
            let removed = try await Retrying.run("completing \(finished.count) resend(s)", logger: context.logger) {
                try await context.resend.complete(app: app.id, finished.map(\.entry))
            }
            var counts: [String: Int] = [:]
            for (item, wasPresent) in zip(finished, removed) where wasPresent {
                counts[item.counter, default: 0] += 1
                if item.sent { counts["sent", default: 0] += 1 }
            }
            try await increment(counts, jobID: jobID)
        }
    }

    private func increment(_ counts: [String: Int], jobID: String) async throws {
        guard !counts.isEmpty else { return }
        try await Retrying.run("updating statistics of job \(jobID)", logger: context.logger) {
            try await context.jobs.increment(jobID: jobID, counts)
        }
    }

    private func letter(for delivery: Delivery, result: SendResult, job: PushJob, jobID: String, app: PushApp, now: Int64) -> DeadLetter {
        var status: Int?
        if case .response(let response) = result {
            status = response.status
        }
        return DeadLetter(
            reason: result.reason,
            message: "APNs refused the notification for good (\(result.reason))",
            app: app.id,
            jobID: jobID,
            token: delivery.token.hex,
            status: status,
            attempts: delivery.previousAttempts + result.attempts,
            deadLetteredAt: now)
    }
}
