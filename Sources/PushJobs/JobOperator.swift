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

    package init(producer: KafkaProducer, jobs: JobStore) {
        self.producer = producer
        self.jobs = jobs
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
