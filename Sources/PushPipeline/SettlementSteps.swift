import APNsCore
import PushCore
import PushStore

extension Settlement {
    /// One thing a batch's settlement does to the world, in ``steps(_:)``'s order.
    enum Step: Equatable, Sendable {
        /// The job is paused fleet-wide (APNs refused the whole request).
        case pauseJob(reason: String)
        /// The app's sending to the job's environment is suspended fleet-wide (its credential).
        case suspendApp(reason: String)
        /// Removals and keep-asides, through the job's gate (``HeldEffects``).
        case offerRegistryChanges([FeedbackEvent])
        /// Failures to the resend buffer (those another worker settled meanwhile left out); the
        /// buffer's answer adds dead letters and records to the next steps (``afterScheduling``).
        case scheduleResends([ResendFailure])
        /// Dead letters to `push.dlq`, with those the resend buffer gave up on.
        case deadLetter([DeadLetter])
        /// The first sends' outcomes and sent markers, with those of the resends just buffered.
        case recordOutcomes([DeliveryOutcomeRecord])
        /// Resends finished: their buffer entries removed, their outcomes counted.
        case completeResends([FinishedResend])
        /// The circuit breaker judges the job's statistics, this batch included.
        case judge
    }

    /// The steps of `plan`, in the order that loses nothing:
    /// - the pause and the suspension first, so that the rest of the fleet stops sending soonest;
    /// - side effects (registry changes, the resend buffer, dead letters) before the sent markers,
    ///   so that a worker dying in between sends again rather than loses;
    /// - finished resends after the markers, each buffer entry's removal being its marker;
    /// - the breaker last, over statistics that include this batch.
    ///
    /// A step that fails stops the ones after it: the batch's deliveries keep no outcome and are
    /// settled again when the chunk or resend is processed again.
    static func steps(_ plan: Plan) -> [Step] {
        var steps: [Step] = []
        if let reason = plan.pauseJob { steps.append(.pauseJob(reason: reason)) }
        if let reason = plan.suspendApp { steps.append(.suspendApp(reason: reason)) }
        if !plan.registryChanges.isEmpty { steps.append(.offerRegistryChanges(plan.registryChanges)) }
        if !plan.resends.isEmpty { steps.append(.scheduleResends(plan.resends)) }
        if !plan.deadLetters.isEmpty || !plan.resends.isEmpty { steps.append(.deadLetter(plan.deadLetters)) }
        if !plan.records.isEmpty || !plan.resends.isEmpty { steps.append(.recordOutcomes(plan.records)) }
        if !plan.finishedResends.isEmpty { steps.append(.completeResends(plan.finishedResends)) }
        steps.append(.judge)
        return steps
    }
}

/// What carrying out a settlement does, one method per ``Settlement/Step``: over Redis and
/// Kafka in ``NotificationSender``, recorded in tests.
protocol SettlementEffects: Sendable {
    func pauseJob(reason: String) async throws
    func suspendApp(reason: String) async throws
    func offerRegistryChanges(_ changes: [FeedbackEvent]) async throws
    /// Reads the sent markers of the first sends among `failures` and buffers the rest
    /// (``Settlement/resendsToSchedule(_:positions:marked:)``), in one step, so that a retry after
    /// a cut from Redis sees what other workers did meanwhile. Answers what was buffered and the
    /// entries the buffer gave up on, with the tallies that count the resends among them
    /// (``Settlement/countedByTheBuffer(_:positions:)``).
    func scheduleResends(
        _ failures: [ResendFailure], positions: [DeviceToken: UInt32]
    ) async throws -> (scheduled: [ResendFailure], expired: [ResendEntry], givenUp: [ResendTally])
    /// Publishes `letters`, then counts the resends the buffer gave up on: applies `givenUp` to
    /// the job and forgets them (``ResendCompletion``).
    func deadLetter(_ letters: [DeadLetter], givenUp: [ResendTally]) async throws
    /// `retried` first sends went to the resend buffer (a worker counter).
    func countRetried(_ retried: Int)
    func recordOutcomes(_ records: [DeliveryOutcomeRecord]) async throws
    func completeResends(_ finished: [Settlement.FinishedResend]) async throws
    func judge() async throws
}

extension Settlement {
    /// Runs `steps` through `effects` in order, stopping at the first that throws. `positions`
    /// are the batch's first sends' positions, by token.
    static func carryOut(
        _ steps: [Step], positions: [DeviceToken: UInt32], facts: Facts, through effects: some SettlementEffects
    ) async throws {
        var scheduled = AfterScheduling()
        var givenUp: [ResendTally] = []
        for step in steps {
            switch step {
            case .pauseJob(let reason):
                try await effects.pauseJob(reason: reason)
            case .suspendApp(let reason):
                try await effects.suspendApp(reason: reason)
            case .offerRegistryChanges(let changes):
                try await effects.offerRegistryChanges(changes)
            case .scheduleResends(let failures):
                let answer = try await effects.scheduleResends(failures, positions: positions)
                scheduled = afterScheduling(answer.scheduled, expired: answer.expired, positions: positions, facts: facts)
                givenUp = answer.givenUp
                effects.countRetried(scheduled.retried)
            case .deadLetter(let letters):
                try await effects.deadLetter(letters + scheduled.deadLetters, givenUp: givenUp)
            case .recordOutcomes(let records):
                let all = records + scheduled.records
                if !all.isEmpty { try await effects.recordOutcomes(all) }
            case .completeResends(let finished):
                try await effects.completeResends(finished)
            case .judge:
                try await effects.judge()
            }
        }
    }
}
