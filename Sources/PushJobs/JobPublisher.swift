import Foundation
public import Kafka
public import PushCore
public import PushStore

/// Publishes jobs to `push.jobs` the way the HTTP API and the CLI do: the job's idempotency key
/// is claimed first (a second request with the same key gets the first job's id and publishes
/// nothing), the job is stored (so its status can be asked for at once), and the call returns
/// only once Kafka confirmed the message. A job whose publishing failed gives its key back, so
/// the request can be retried.
public struct JobPublisher: Sendable {
    let producer: KafkaProducer
    let jobs: JobStore
    let idempotency: IdempotencyKeys

    /// The custom payload key that carries the job id to the device, next to `aps`:
    /// `{"pushfleet": {"job": "<id>"}}`; the app's notification service extension reads it and
    /// reports receipts with it.
    public static let receiptKey = JobRecall.payloadKey

    /// The largest job (its JSON) a Kafka message carries: librdkafka's default
    /// `message.max.bytes` (1,000,000) less room for the key and headers.
    public static let maxJobBytes = 999_000

    /// A job whose JSON is larger than ``maxJobBytes``: too large for one Kafka message.
    public struct JobTooLarge: Error, CustomStringConvertible {
        public let bytes: Int

        public var description: String {
            "the job is \(bytes) bytes of JSON; a job is at most \(JobPublisher.maxJobBytes) bytes (one Kafka message): split its tokens over several jobs"
        }
    }

    public init(producer: KafkaProducer, jobs: JobStore, idempotency: IdempotencyKeys) {
        self.producer = producer
        self.jobs = jobs
        self.idempotency = idempotency
    }

    /// What became of a job handed to ``publish(_:digest:)``.
    public enum Outcome: Sendable, Hashable {
        /// Published now.
        case published(jobID: String)
        /// Its idempotency key was used before by the same request: that job's id; nothing
        /// was published.
        case replayed(jobID: String)
        /// Its idempotency key was used before by a different request (another digest).
        case conflict(jobID: String)
    }

    /// Publishes a validated job that carries its id.
    ///
    /// - Parameter digest: identifies the request (a hash of its body), so that the same
    ///   idempotency key with another request is told apart; empty when not known.
    /// - Throws: `KafkaError` or `RedisClientError` when Kafka or Redis is away (the key's
    ///   claim is released when it can be).
    public func publish(_ job: PushJob, digest: String = "") async throws -> Outcome {
        guard let jobID = job.id else {
            preconditionFailure("JobPublisher publishes jobs that carry their id")
        }
        let json = Array(job.jsonData())
        guard json.count <= Self.maxJobBytes else {
            throw JobTooLarge(bytes: json.count)
        }
        if let key = job.idempotencyKey,
            let owner = try await idempotency.claim(app: job.app, key: key, jobID: jobID, digest: digest)
        {
            return owner.digest == digest ? .replayed(jobID: owner.jobID) : .conflict(jobID: owner.jobID)
        }
        do {
            try await jobs.saveSpec(jobID: jobID, json: json)
            try await jobs.index.add(app: job.app, jobID: jobID, at: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
            _ = try await producer.send(TraceContext.inject(into: KafkaProducerMessage(topic: PushTopic.jobs, key: Array(jobID.utf8), value: json)))
        } catch {
            if let key = job.idempotencyKey {
                _ = try? await idempotency.release(app: job.app, key: key, jobID: jobID)
            }
            throw error
        }
        return .published(jobID: jobID)
    }
}
