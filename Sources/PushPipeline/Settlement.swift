import APNs
import APNsCore
import PushCore
import PushStore

/// The rules that turn the outcomes of a job's notifications into what the pipeline does: a
/// value in, a plan out, no I/O. ``NotificationSender`` carries plans out; every rule is
/// unit-tested here, apart from Redis, Kafka and APNs.
///
/// | outcome | what the plan says |
/// |---|---|
/// | accepted | counted (`accepted`, `sent`), marker written |
/// | 410 `Unregistered`, `ExpiredToken` | counted as failed; the token's removal is a registry change (with APNs's timestamp) |
/// | `BadDeviceToken`, `DeviceTokenNotForTopic` | counted as failed; the token is kept aside (a registry change, never a removal), except `DeviceTokenNotForTopic` under an extra topic, which says nothing about the token |
/// | a refusal Apple does not document | counted as failed, dead-lettered |
/// | a refusal of the whole request (`BadTopic`, `TopicDisallowed`, `InvalidPushType`, `BadCertificateEnvironment`, …) | the job is paused; the notification keeps no outcome and is sent again if the job resumes |
/// | the credential refused | the app's sending to the job's environment is suspended; the notification waits in the resend buffer until the suspension ends |
/// | no answer (timeout, lost connection), 429, 5xx, not sent | the resend buffer, not due before APNs's `Retry-After` when it sent one |
/// | the job was cancelled | counted as `cancelled`, never sent |
///
/// Registry changes are not applied by the plan's carrier directly: they go through the job's
/// gate (``JobControl/gate``), so a job the circuit breaker stops changes nothing.
enum Settlement {
    /// What the rules need to know besides the outcomes.
    struct Facts: Sendable {
        var app: String
        var jobID: String
        var environment: APNsEnvironment
        /// The kind of the job's tokens: the registry their feedback changes.
        var kind: TokenKind = .device
        /// Whether the job goes out with its app's own topic (not one of its extra topics).
        var usesOwnTopic: Bool
        /// Milliseconds since 1970.
        var now: Int64
        /// How long an app's sending stays suspended after its credential was refused.
        var suspension: Duration
    }

    /// What became of one notification, in the words of the rules above.
    enum Outcome: Equatable, Sendable {
        case accepted
        /// 410: the token is gone since `since` (ms since 1970).
        case unregistered(reason: String, since: Int64)
        /// `BadDeviceToken` / `DeviceTokenNotForTopic`; `keepAside`: the token is to be kept
        /// aside as suspect.
        case rejectedToken(reason: String, keepAside: Bool)
        /// A refusal Apple does not document.
        case refused(reason: String, status: Int?)
        /// A refusal of the whole request.
        case misconfigured(reason: String)
        /// The provider credential was refused.
        case credentialRefused(reason: String)
        /// No answer, or an answer that asks to try again; `attempts` made by this send;
        /// `retryAfter`: APNs's `Retry-After`, if it sent one.
        case transient(reason: String, attempts: Int, retryAfter: Duration? = nil)
        /// Not sent (the app is suspended, the worker is stopping).
        case notSent(reason: String)
        case cancelled

        /// Classifies one result.
        init(_ result: SendResult, facts: Facts) {
            switch result {
            case .cancelled:
                self = .cancelled
            case .notSent(let reason):
                self = .notSent(reason: reason)
            case .failure(let error):
                if error.code == .invalidCredential {
                    self = .credentialRefused(reason: "\(error.code)")
                } else {
                    // Timeouts, lost connections, and a client shutting down under the send:
                    // APNs may not have it, so it is sent again.
                    self = .transient(reason: "\(error.code)", attempts: 1)
                }
            case .response(let response):
                let reason = response.reason?.rawValue ?? (response.isSuccess ? "Success" : "HTTP\(response.status)")
                switch response.responseClass {
                case .success:
                    self = .accepted
                case .unregistered:
                    self = .unregistered(reason: reason, since: response.timestamp ?? facts.now)
                case .tokenRejected:
                    let saysTokenIsWrong = response.reason != .deviceTokenNotForTopic || facts.usesOwnTopic
                    self = .rejectedToken(reason: reason, keepAside: saysTokenIsWrong)
                case .misconfiguration:
                    self = .misconfigured(reason: reason)
                case .providerAuthentication:
                    self = .credentialRefused(reason: reason)
                case .retryable:
                    self = .transient(reason: reason, attempts: max(response.attempts, 1), retryAfter: response.retryAfter)
                case .permanent:
                    self = .refused(reason: reason, status: response.status)
                }
            }
        }

        /// The outcome's name in metrics (`pushfleet_notifications_total{outcome}`).
        var metricName: String {
            switch self {
            case .accepted: "accepted"
            case .unregistered: "unregistered"
            case .rejectedToken: "token-rejected"
            case .refused: "refused"
            case .misconfigured: "misconfigured"
            case .credentialRefused: "credential-refused"
            case .transient: "retryable"
            case .notSent: "not-sent"
            case .cancelled: "cancelled"
            }
        }

        /// The reason recorded with it.
        var reason: String {
            switch self {
            case .accepted: "Success"
            case .unregistered(let reason, _), .rejectedToken(let reason, _), .refused(let reason, _),
                .misconfigured(let reason), .credentialRefused(let reason), .transient(let reason, _, _),
                .notSent(let reason):
                reason
            case .cancelled: "cancelled"
            }
        }
    }

    /// A resend with a final outcome: its entry is completed, then counted if it was still there.
    struct FinishedResend: Equatable, Sendable {
        var entry: ResendEntry
        var counter: JobCounter
        var sent: Bool
    }

    /// An outcome metric: how many notifications had it, by outcome and reason.
    struct MetricKey: Hashable, Sendable {
        var outcome: String
        var reason: String
    }

    /// What to do with a batch of outcomes.
    struct Plan: Sendable {
        /// First sends with a final outcome: sent markers and counters.
        var records: [DeliveryOutcomeRecord] = []
        /// Resends with a final outcome.
        var finishedResends: [FinishedResend] = []
        /// Registry changes the answers call for (removals and suspect marks), for the job's gate.
        var registryChanges: [FeedbackEvent] = []
        var deadLetters: [DeadLetter] = []
        /// Notifications for the resend buffer.
        var resends: [ResendFailure] = []
        /// Suspend the app's sending fleet-wide, for this reason.
        var suspendApp: String?
        /// Pause the job fleet-wide, for this reason.
        var pauseJob: String?
        /// Notifications left without an outcome (their job is to pause): sent again if it resumes.
        var leftForResume = 0
        var workerCounts: [WorkerCounters.Name: Int] = [:]
        var metrics: [MetricKey: Int] = [:]

        /// The notifications of the batch that count as sent (reached APNs, accepted or refused;
        /// first sends and resends): what the app's hour-of-day statistics add to the hour.
        var sentCount: Int {
            records.lazy.filter(\.countsAsSent).count + finishedResends.lazy.filter(\.sent).count
        }
    }

    /// The plan for a batch of outcomes of one job.
    static func plan(_ outcomes: [(Delivery, SendResult)], facts: Facts) -> Plan {
        var plan = Plan()
        for (delivery, result) in outcomes {
            let outcome = Outcome(result, facts: facts)
            plan.metrics[MetricKey(outcome: outcome.metricName, reason: outcome.reason), default: 0] += 1
            switch outcome {
            case .accepted:
                plan.workerCounts[.accepted, default: 0] += 1
                if delivery.resendEntry != nil { plan.workerCounts[.resent, default: 0] += 1 }
                plan.finish(delivery, .accepted, sent: true)
            case .unregistered(let reason, let since):
                plan.workerCounts[.tokensUnregistered, default: 0] += 1
                plan.registryChanges.append(facts.event(delivery, reason: reason, at: since))
                plan.finish(delivery, .failed(reason: reason), sent: true)
            case .rejectedToken(let reason, let keepAside):
                plan.workerCounts[.tokensRejected, default: 0] += 1
                if keepAside {
                    plan.registryChanges.append(facts.event(delivery, reason: reason, at: facts.now))
                }
                plan.finish(delivery, .failed(reason: reason), sent: true)
            case .refused(let reason, let status):
                plan.workerCounts[.permanentFailures, default: 0] += 1
                plan.deadLetters.append(
                    DeadLetter(
                        reason: reason, message: "APNs refused the notification for good (\(reason))", app: facts.app,
                        jobID: facts.jobID, token: delivery.token.hex, status: status,
                        attempts: delivery.previousAttempts + result.attempts, deadLetteredAt: facts.now))
                plan.finish(delivery, .failed(reason: reason), sent: true)
            case .misconfigured(let reason):
                plan.pauseJob = plan.pauseJob ?? reason
                plan.leftForResume += 1
            case .credentialRefused(let reason):
                plan.suspendApp = plan.suspendApp ?? reason
                plan.resends.append(facts.failure(delivery, attempts: result.attempts, reason: reason, retryAfter: facts.suspension))
            case .transient(let reason, let attempts, let retryAfter):
                plan.resends.append(facts.failure(delivery, attempts: attempts, reason: reason, retryAfter: retryAfter))
            case .notSent(let reason):
                plan.resends.append(facts.failure(delivery, attempts: 0, reason: reason, retryAfter: nil))
            case .cancelled:
                plan.workerCounts[.cancelledNotifications, default: 0] += 1
                plan.finish(delivery, .cancelled, sent: false)
            }
        }
        if plan.leftForResume > 0 {
            plan.workerCounts[.leftForResume, default: 0] += plan.leftForResume
        }
        return plan
    }

    /// The resends of a batch that go to the buffer, and the first sends that go nowhere.
    struct ResendSelection: Equatable, Sendable {
        var toSchedule: [ResendFailure] = []
        /// First sends whose position another worker settled meanwhile.
        var settledElsewhere = 0
    }

    /// The positions of the first sends among `resends` (a resend from the buffer has none):
    /// their sent markers are read before the batch goes to the buffer.
    static func positionsToCheck(_ resends: [ResendFailure], positions: [DeviceToken: UInt32]) -> [UInt32] {
        resends.compactMap { positions[$0.token] }
    }

    /// Which resends go to the buffer, given the `marked` positions (their sent marker is set).
    ///
    /// A first send whose marker is set was settled by another worker while this one waited: it
    /// took the chunk over when this worker's lease ran out (this worker cut off from Redis, say)
    /// and sent the notification, or buffered it itself. Its outcome stands; buffering this
    /// attempt too would send the notification twice once the buffer is drained. So it goes
    /// nowhere and counts as a duplicate skipped. Every other resend goes to the buffer: at least
    /// once stays the rule, as no position is marked without an outcome.
    static func resendsToSchedule(_ resends: [ResendFailure], positions: [DeviceToken: UInt32], marked: Set<UInt32>) -> ResendSelection {
        var selection = ResendSelection()
        for failure in resends {
            if let position = positions[failure.token], marked.contains(position) {
                selection.settledElsewhere += 1
            } else {
                selection.toSchedule.append(failure)
            }
        }
        return selection
    }

    /// What follows once the resend buffer took ``Plan/resends`` and answered which entries it
    /// gave up on (`expired`: too many attempts, or too old).
    struct AfterScheduling: Equatable, Sendable {
        /// First sends whose outcome is now final: `retried` (in the buffer) or `dead-lettered`.
        var records: [DeliveryOutcomeRecord] = []
        var deadLetters: [DeadLetter] = []
        /// First sends that went to the buffer (``WorkerCounters/Name/retried``).
        var retried = 0
    }

    /// Which of `failures` the resend buffer counts `dead-lettered` when it gives up on them
    /// (``ResendBuffer/schedule(app:_:countingGivenUp:)``): the resends, whose entries it removes.
    /// A first send (it has a position) is counted by its sent marker instead
    /// (``afterScheduling(_:expired:positions:facts:)``).
    static func countedByTheBuffer(_ failures: [ResendFailure], positions: [DeviceToken: UInt32]) -> [Bool] {
        failures.map { positions[$0.token] == nil }
    }

    /// The records and dead letters of the resends: a first send is recorded as retried (or
    /// dead-lettered when the buffer gave up at once); a resend the buffer gave up on gets its
    /// dead letter (the buffer counted it).
    ///
    /// `positions` are the positions of the first sends (the resends have none).
    static func afterScheduling(
        _ resends: [ResendFailure], expired: [ResendEntry], positions: [DeviceToken: UInt32], facts: Facts
    ) -> AfterScheduling {
        var result = AfterScheduling()
        let expiredTokens = Set(expired.map(\.token))
        for entry in expired {
            result.deadLetters.append(
                DeadLetter(
                    reason: "resend-expired",
                    message: "gave up after \(entry.attempts) attempt(s); last reason \(entry.lastReason)",
                    app: facts.app, jobID: facts.jobID, token: entry.token.hex, attempts: entry.attempts, deadLetteredAt: facts.now))
        }
        for failure in resends {
            let gaveUp = expiredTokens.contains(failure.token)
            if let position = positions[failure.token] {
                if !gaveUp { result.retried += 1 }
                result.records.append(
                    DeliveryOutcomeRecord(position: position, counter: gaveUp ? .deadLettered : .retried, countsAsSent: failure.attempts > 0))
            }
        }
        return result
    }
}

extension Settlement.Plan {
    fileprivate mutating func finish(_ delivery: Delivery, _ counter: JobCounter, sent: Bool) {
        switch delivery.source {
        case .resend(let entry):
            finishedResends.append(Settlement.FinishedResend(entry: entry, counter: counter, sent: sent))
        case .chunk(let position):
            records.append(DeliveryOutcomeRecord(position: position, counter: counter, countsAsSent: sent))
        }
    }
}

extension Settlement.Facts {
    fileprivate func event(_ delivery: Delivery, reason: String, at time: Int64) -> FeedbackEvent {
        FeedbackEvent(
            app: app, token: delivery.token, environment: environment, reason: reason, invalidSince: time, jobID: jobID, kind: kind)
    }

    fileprivate func failure(_ delivery: Delivery, attempts: Int, reason: String, retryAfter: Duration?) -> ResendFailure {
        ResendFailure(
            jobID: jobID, token: delivery.token, attempts: delivery.previousAttempts + attempts,
            firstFailedAt: delivery.resendEntry?.firstFailedAt ?? now, reason: reason, retryAfter: retryAfter)
    }
}
