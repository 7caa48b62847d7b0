import Foundation
import Kafka
import PushCore
import PushStore

/// What operators do to a published job, for the CLI (`pushfleet jobs …`) and the HTTP API
/// alike: pause it, resume it, cancel (abort) it, change its rate. Each is a
/// ``JobControl/Command`` applied to the job's control state in Redis; the workers read that
/// state and follow it within a second.
///
/// Resuming publishes the job again: the part of it a pause left undone (chunks dropped while
/// paused, shards not scanned) is expanded again, and the sent markers skip every token that
/// already has an outcome. A job resumed after the circuit breaker tripped has its held
/// registry changes released.
package struct JobOperator: Sendable {
    let producer: KafkaProducer
    let jobs: JobStore
    let publisher: JobPublisher

    package init(producer: KafkaProducer, jobs: JobStore, publisher: JobPublisher) {
        self.producer = producer
        self.jobs = jobs
        self.publisher = publisher
    }

    /// A job the store does not know (never published, or expired).
    package struct UnknownJob: Error, CustomStringConvertible {
        package let jobID: String
        package var description: String { "no job '\(jobID)' (unknown, or expired)" }
    }

    /// Pauses a running job fleet-wide; a paused job stays as it is.
    package func pause(jobID: String, reason: String, at: Int64) async throws -> JobStore.ControlUpdate {
        try await jobs.update(jobID: jobID, .pause(reason: reason, at: at))
    }

    /// Resumes a paused job: it runs again, its undone part is published again and, when its gate
    /// now applies, its held registry changes are released.
    ///
    /// - Throws: ``UnknownJob`` when the job's spec is gone; ``JobControl/Refusal`` when it is
    ///   not paused or was cancelled; Kafka and Redis errors.
    package func resume(jobID: String, at: Int64) async throws -> JobStore.ControlUpdate {
        guard let spec = try await jobs.spec(jobID: jobID) else { throw UnknownJob(jobID: jobID) }
        let update = try await jobs.update(jobID: jobID, .resume(at: at))
        do {
            _ = try await producer.send(TraceContext.inject(into: KafkaProducerMessage(topic: PushTopic.jobs, key: Array(jobID.utf8), value: spec)))
        } catch {
            // Running but not published again, its dropped part would never be sent: pause it
            // again, so that resuming can simply be tried again.
            _ = try? await jobs.update(jobID: jobID, .pause(reason: "resuming could not publish the job again (\(error)); resume it again", at: at))
            throw error
        }
        if update.after.gate == .apply {
            try await effects.release(jobID: jobID)
        }
        return update
    }

    /// Cancels a job: nothing more of it is sent, and its held registry changes are discarded.
    package func cancel(jobID: String, reason: String, at: Int64) async throws -> JobStore.ControlUpdate {
        try await jobs.update(jobID: jobID, .cancel(reason: reason, at: at))
    }

    /// A campaign recalled already: each is recalled once.
    package struct AlreadyRecalled: Error, CustomStringConvertible {
        package let jobID: String
        package let recall: JobStore.RecallLink
        package var description: String { "job \(jobID) was recalled already (\(recall.mode.rawValue)) by job \(recall.jobID)" }
    }

    /// A recall whose job does not validate (its overwriting content, most often).
    package struct InvalidRecall: Error, CustomStringConvertible {
        package let error: MessageValidationError
        /// The field at fault as the caller gave it: the overwriting content's under
        /// `overwrite-with.`; anything else of the recall job is the campaign's.
        package var field: String {
            let field = error.field
            return field.hasPrefix("notification") || field.hasPrefix("headers") ? "overwrite-with." + field : field
        }
        package var description: String { "\(field): \(error.message) [\(error.code)]" }
    }

    /// What ``recall(jobID:overwriteWith:at:window:)`` did.
    package struct RecallOutcome: Sendable {
        /// The recall's own job.
        package var recallID: String
        package var mode: JobRecall.Mode
        /// Whether the campaign was still going and is cancelled now.
        package var cancelled: Bool
    }

    /// Recalls a campaign: what is not yet sent of it is cancelled (as ``cancel(jobID:reason:at:)``
    /// does), and a recall job of its own (``PushJob/recall(id:overwriteWith:publishedAt:now:window:)``)
    /// is published: a withdraw to every device that accepted the campaign, or, with
    /// `overwriteWith`, new content under the campaign's collapse id. A campaign is recalled
    /// once, within `window` of its publication.
    ///
    /// - Throws: ``UnknownJob``; ``RecallRefusal``; ``AlreadyRecalled``; ``InvalidRecall``;
    ///   ``JobPublisher/JobTooLarge``; Kafka and Redis errors (the recall can then be asked for again).
    package func recall(
        jobID: String, overwriteWith: (notification: APNsPayload, headers: PushHeaders?)?, at now: Int64, window: Duration
    ) async throws -> RecallOutcome {
        guard let spec = try await jobs.spec(jobID: jobID), var campaign = try? PushJob(json: JSONValue(parsing: Data(spec))) else {
            throw UnknownJob(jobID: jobID)
        }
        campaign.id = jobID
        if let link = try await jobs.recalledBy(jobID: jobID) { throw AlreadyRecalled(jobID: jobID, recall: link) }
        let publishedAt = try await jobs.index.listedAt(app: campaign.app, jobID: jobID).map { Date(timeIntervalSince1970: Double($0) / 1000) }
        let recallID = UUID().uuidString.lowercased()
        let recalling = try campaign.recall(
            id: recallID, overwriteWith: overwriteWith, publishedAt: publishedAt, now: Date(timeIntervalSince1970: Double(now) / 1000),
            window: TimeInterval(window.components.seconds))
        do {
            try recalling.validate()
        } catch {
            throw InvalidRecall(error: error)
        }
        let mode = recalling.recall?.mode ?? .withdraw
        if let link = try await jobs.claimRecall(of: jobID, by: recallID, mode: mode) { throw AlreadyRecalled(jobID: jobID, recall: link) }
        do {
            var cancelled = false
            if !(try await JobReport.load(jobID: jobID, from: jobs).isComplete) {
                do {
                    cancelled = try await cancel(jobID: jobID, reason: "recalled by job \(recallID)", at: now).changed
                } catch is JobControl.Refusal {
                    // Cancelled already: nothing of it is left to send.
                }
            }
            _ = try await publisher.publish(recalling)
            return RecallOutcome(recallID: recallID, mode: mode, cancelled: cancelled)
        } catch {
            try? await jobs.releaseRecall(of: jobID, by: recallID, mode: mode)
            throw error
        }
    }

    /// Sets (or with `nil` removes) the job's rate, in notifications per second; it nests
    /// inside the app's rate like a job's own `throttle.rate-per-second`.
    package func setRate(jobID: String, _ rate: Double?) async throws -> JobStore.ControlUpdate {
        try await jobs.update(jobID: jobID, .setRate(rate))
    }

    private var effects: HeldEffects {
        HeldEffects(jobs: jobs) { [producer] messages in
            _ = try await producer.send(TraceContext.inject(into: messages))
        }
    }
}
