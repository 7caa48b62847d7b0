import APNs
import APNsCore
import PushCore
import PushStore
import Synchronization
import Testing

@testable import PushPipeline

/// How ``NotificationSender`` settles a batch: ``Settlement/steps(_:)`` in their order, carried
/// out by ``Settlement/carryOut(_:positions:facts:through:)`` through recording effects.
@Suite("Notification sender: settling a batch")
struct NotificationSenderTests {
    typealias Step = Settlement.Step
    let facts = SettlementTests.facts

    /// Records each effect by name, answers the resend buffer as told, and fails at `failing`.
    final class RecordingEffects: SettlementEffects {
        struct Failure: Error {}
        let failing: String?
        /// Which of the failures the buffer gives up on.
        let expire: Set<DeviceToken>
        let calls = Mutex<[String]>([])
        let letters = Mutex<[DeadLetter]>([])
        let records = Mutex<[DeliveryOutcomeRecord]>([])

        init(failing: String? = nil, expire: Set<DeviceToken> = []) {
            self.failing = failing
            self.expire = expire
        }

        var names: [String] { calls.withLock { $0 } }

        private func call(_ name: String) throws {
            calls.withLock { $0.append(name) }
            if name == failing { throw Failure() }
        }

        func pauseJob(reason: String) async throws { try call("pause") }
        func suspendApp(reason: String) async throws { try call("suspend") }
        func offerRegistryChanges(_ changes: [FeedbackEvent]) async throws { try call("registry") }
        func scheduleResends(
            _ failures: [ResendFailure], positions: [DeviceToken: UInt32]
        ) async throws -> (scheduled: [ResendFailure], expired: [ResendEntry], givenUp: [ResendTally]) {
            try call("resends")
            return (failures, failures.filter { expire.contains($0.token) }.map(\.entry), [])
        }
        func deadLetter(_ letters: [DeadLetter], givenUp: [ResendTally]) async throws {
            try call("dead letters")
            self.letters.withLock { $0 += letters }
        }
        func countRetried(_ retried: Int) { calls.withLock { $0.append("retried \(retried)") } }
        func recordOutcomes(_ records: [DeliveryOutcomeRecord]) async throws {
            try call("markers")
            self.records.withLock { $0 += records }
        }
        func completeResends(_ finished: [Settlement.FinishedResend]) async throws { try call("completed resends") }
        func judge() async throws { try call("breaker") }
    }

    /// A batch calling for every step: accepted first send and resend, a removal, an
    /// undocumented refusal, a timeout, and (with `whole`) the whole request and the credential refused.
    func plan(whole: Bool = true) -> (Settlement.Plan, [DeviceToken: UInt32]) {
        var outcomes: [(Delivery, SendResult)] = [
            (SettlementTests.first(1), SettlementTests.answer(200)),
            (SettlementTests.resend(2), SettlementTests.answer(200)),
            (SettlementTests.first(3), SettlementTests.answer(410, .unregistered, timestamp: 5)),
            (SettlementTests.first(4), SettlementTests.answer(400, .unknown("Odd"))),
            (SettlementTests.first(5), .failure(APNsError(.timeout))),
        ]
        if whole {
            outcomes.append((SettlementTests.first(6), SettlementTests.answer(400, .badTopic)))
            outcomes.append((SettlementTests.first(7), SettlementTests.answer(403, .invalidProviderToken)))
        }
        let positions = Dictionary(uniqueKeysWithValues: outcomes.compactMap { delivery, _ in delivery.position.map { (delivery.token, $0) } })
        return (Settlement.plan(outcomes, facts: facts), positions)
    }

    @Test("the pause and the suspension first, side effects before the sent markers, finished resends after them, the breaker last")
    func order() async throws {
        let (plan, positions) = plan()
        #expect(
            Settlement.steps(plan).map(\.name)
                == ["pause", "suspend", "registry", "resends", "dead letters", "markers", "completed resends", "breaker"])
        let effects = RecordingEffects()
        try await Settlement.carryOut(Settlement.steps(plan), positions: positions, facts: facts, through: effects)
        #expect(effects.names == ["pause", "suspend", "registry", "resends", "retried 2", "dead letters", "markers", "completed resends", "breaker"])
    }

    @Test("a plain batch of accepted first sends records its markers and lets the breaker judge, nothing else")
    func plainBatch() async throws {
        let plan = Settlement.plan([(SettlementTests.first(1), SettlementTests.answer(200))], facts: facts)
        #expect(Settlement.steps(plan).map(\.name) == ["markers", "breaker"])
    }

    @Test("what the resend buffer gives up on is dead-lettered and recorded with the batch's own")
    func bufferAnswerFeedsTheNextSteps() async throws {
        let (plan, positions) = plan(whole: false)
        let effects = RecordingEffects(expire: [SettlementTests.token(5)])
        try await Settlement.carryOut(Settlement.steps(plan), positions: positions, facts: facts, through: effects)
        #expect(effects.letters.withLock { $0.map(\.reason) }.sorted() == ["Odd", "resend-expired"])
        let markers = effects.records.withLock { $0 }
        #expect(markers.first { $0.position == 105 }?.counter == .deadLettered)
        #expect(effects.names.contains("retried 0"))
    }

    @Test(
        "a step that fails stops every later one: no sent marker without its side effects",
        arguments: ["pause", "suspend", "registry", "resends", "dead letters", "markers", "completed resends", "breaker"])
    func failingStep(_ failing: String) async throws {
        let (plan, positions) = plan()
        let effects = RecordingEffects(failing: failing)
        await #expect(throws: RecordingEffects.Failure.self) {
            try await Settlement.carryOut(Settlement.steps(plan), positions: positions, facts: facts, through: effects)
        }
        let called = effects.names.filter { !$0.hasPrefix("retried") }
        #expect(called.last == failing)
        let all = Settlement.steps(plan).map(\.name)
        #expect(called == Array(all.prefix(through: all.firstIndex(of: failing)!)))
    }
}

extension Settlement.Step {
    /// The effect the step calls (``NotificationSenderTests/RecordingEffects``).
    var name: String {
        switch self {
        case .pauseJob: "pause"
        case .suspendApp: "suspend"
        case .offerRegistryChanges: "registry"
        case .scheduleResends: "resends"
        case .deadLetter: "dead letters"
        case .recordOutcomes: "markers"
        case .completeResends: "completed resends"
        case .judge: "breaker"
        }
    }
}
