import APNsCore
import Foundation
import Kafka
import PushCore
import PushStore

/// A job's registry changes (token removals, suspect marks: `push.feedback` events) carried
/// through its gate (``JobControl/gate``): held beside the job while the circuit breaker
/// watches it or it is paused, published once it is cleared or resumed, discarded when it is
/// cancelled. The senders offer changes; whoever clears or resumes a job releases what was
/// held.
package struct HeldEffects: Sendable {
    package let jobs: JobStore
    /// Publishes messages to Kafka and returns once Kafka has them.
    package let publish: @Sendable ([KafkaProducerMessage]) async throws -> Void

    package init(jobs: JobStore, publish: @escaping @Sendable ([KafkaProducerMessage]) async throws -> Void) {
        self.jobs = jobs
        self.publish = publish
    }

    /// Changes released per round.
    package static let releaseBatch = 500

    /// The `push.feedback` message of an event: keyed by app and token, so that the events of
    /// one token stay in order.
    package static func message(_ event: FeedbackEvent) -> KafkaProducerMessage {
        KafkaProducerMessage(topic: PushTopic.feedback, key: "\(event.app)/\(event.token.hex)", value: event.jsonData())
    }

    /// Offers a job's changes: held, discarded or published as its gate says; when the gate
    /// applies and changes are still held (a release cut short), releases them too.
    package func offer(jobID: String, _ events: [FeedbackEvent]) async throws -> JobStore.EffectsAnswer {
        let answer = try await jobs.offerEffects(jobID: jobID, events.map { Array($0.jsonData()) })
        if answer.gate == .apply {
            try await publish(events.map(Self.message))
            if answer.held > 0 {
                try await release(jobID: jobID)
            }
        }
        return answer
    }

    /// Publishes every change held for the job, oldest first, once its gate applies (nothing
    /// otherwise); returns how many.
    @discardableResult
    package func release(jobID: String) async throws -> Int {
        var released = 0
        while true {
            let batch = try await jobs.takeHeldEffects(jobID: jobID, limit: Self.releaseBatch)
            guard !batch.isEmpty else { return released }
            // A held change is an event this pipeline wrote; one that no longer decodes is dropped.
            let events = batch.compactMap { try? FeedbackEvent.decode(from: Data($0)) }
            try await publish(events.map(Self.message))
            released += batch.count
        }
    }
}
