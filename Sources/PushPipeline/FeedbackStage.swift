import Foundation
import Kafka
import Logging
import PushConfiguration
import PushCore
import PushStore

/// Consumes `push.feedback`: removes each invalid token from the registry (its shard set, tags
/// and openid mapping) unless it was registered again after APNs's timestamp. Idempotent: a
/// second event for the same token removes nothing and counts nothing.
struct FeedbackStage: Sendable {
    let context: PipelineContext

    /// Handles one event; `false` when the worker stopped before it finished.
    func handle(_ message: KafkaConsumerMessage) async -> Bool {
        do {
            try await process(message)
            return true
        } catch {
            return await context.settleFailure(of: message, error, stage: "feedback stage")
        }
    }

    private func process(_ message: KafkaConsumerMessage) async throws {
        let event: FeedbackEvent
        do {
            event = try FeedbackEvent.decode(from: Data(message.value))
        } catch {
            try await context.deadLetter(message, invalid: error)
            return
        }
        guard context.apps[event.app] != nil else {
            try await context.deadLetter(message, reason: "unknown-app", text: "app '\(event.app)' is not configured", field: "app", app: event.app)
            return
        }
        let removed = try await Retrying.run("removing an invalid token of \(event.app)", logger: context.logger) {
            try await context.registry.removeIfNotRegisteredSince(
                app: event.app, token: event.token, environment: event.environment, invalidSince: event.invalidSince)
        }
        guard removed else {
            context.counters.add(.feedbackKept)
            return
        }
        context.counters.add(.feedbackRemoved)
        if let jobID = event.jobID {
            try await Retrying.run("counting a removed token of job \(jobID)", logger: context.logger) {
                try await context.jobs.increment(jobID: jobID, ["removed": 1])
            }
        }
    }
}
