import APNs
import APNsCore
import Foundation
import Kafka
import Logging
import PushConfiguration
import PushCore
import PushJobs
import PushStore
import Redis
import Tracing

/// What every stage of a worker process uses to report and to hand messages on: the worker's
/// logger, counters and metrics, its apps, publishing to Kafka, dead letters, and the way a
/// consumed message is handled. The stores a stage reads and writes are its own properties
/// (``PipelineStores`` builds them), so each stage shows what it touches.
final class PipelineOutlet: Sendable {
    let apps: [String: PushApp]
    let producer: KafkaProducer
    /// Job statistics (duplicates skipped) and the gates of held registry changes.
    let jobs: JobStore
    /// The newest dead letters of each job and app, for the API; `push.dlq` has them all.
    let deadLetterLog: DeadLetterLog
    let metrics = PipelineMetrics()
    let counters: WorkerCounters
    let logger: Logger
    let clock: @Sendable () -> Int64

    init(
        apps: [String: PushApp], producer: KafkaProducer, jobs: JobStore, deadLetterLog: DeadLetterLog,
        counters: WorkerCounters, logger: Logger, clock: @escaping @Sendable () -> Int64 = StoreClock.system
    ) {
        self.apps = apps
        self.producer = producer
        self.jobs = jobs
        self.deadLetterLog = deadLetterLog
        self.counters = counters
        self.logger = logger
        self.clock = clock
    }

    /// Registry changes carried through each job's gate.
    var heldEffects: HeldEffects {
        HeldEffects(jobs: jobs) { [producer] messages in
            _ = try await producer.send(TraceContext.inject(into: messages))
        }
    }

    /// Publishes messages and waits until Kafka has every one, retrying while Kafka is away. They
    /// carry the trace context of the span publishing them (tracing on).
    func publish(_ messages: [KafkaProducerMessage], _ what: @autoclosure () -> String) async throws {
        guard !messages.isEmpty else { return }
        let messages = TraceContext.inject(into: messages)
        let description = what()
        _ = try await Retrying.run("publishing \(description)", logger: logger) {
            try await producer.send(messages)
        }
    }

    /// Records that `count` notifications of a job were not sent because another delivery of
    /// them was already settled (a chunk seen again, a resend another worker settled): the
    /// worker's `duplicates-skipped`, one log line saying why, and the job's `duplicates`.
    func skippedDuplicates(_ count: Int, jobID: String, _ why: Logger.Message, metadata: Logger.Metadata = [:]) async throws {
        guard count > 0 else { return }
        counters.add(.duplicatesSkipped, count)
        logger.info(why, metadata: metadata.merging(["job": "\(jobID)", "skipped": "\(count)"]) { $1 })
        try await Retrying.run("counting duplicates of job \(jobID)", logger: logger) {
            try await jobs.increment(jobID: jobID, [.duplicates: count])
        }
    }

    /// Publishes letters to `push.dlq`, then lists them in the dead-letter log the API reads (in
    /// a span of the trace of the message or job they come from).
    func deadLetter(_ letters: [DeadLetter]) async throws {
        try await withSpan("dead letters", ofKind: .producer) { span in
            if span.isRecording, let first = letters.first {
                span.attributes["pushfleet.dead-letters"] = letters.count
                span.attributes["pushfleet.reason"] = first.reason
                span.attributes["pushfleet.app"] = first.app ?? ""
            }
            let messages = letters.map { letter in
                KafkaProducerMessage(
                    topic: PushTopic.deadLetters, key: letter.jobID ?? letter.app,
                    value: letter.jsonData(within: JobPublisher.maxJobBytes))
            }
            try await publish(messages, "\(letters.count) dead letter(s)")
            await list(letters)
        }
    }

    /// Dead-letters notifications of job `jobID` that will not be sent: publishes the letters,
    /// counts them (``WorkerCounters/Name/deadLetteredNotifications``) and says so in one log line
    /// with the first letter's reason and message. No-op without letters.
    func deadLetterNotifications(_ letters: [DeadLetter], jobID: String) async throws {
        guard let first = letters.first else { return }
        try await deadLetter(letters)
        counters.add(.deadLetteredNotifications, letters.count)
        logger.warning(
            "dead-lettered \(letters.count) notification(s) of job \(jobID), the first for \(first.reason): \(first.message)",
            metadata: ["app": "\(first.app ?? "")", "job": "\(jobID)", "reason": "\(first.reason)"])
    }

    /// Lists letters Kafka has in the dead-letter log (``DeadLetterLog``), those of configured
    /// apps only: the API answers for no other app, and a message naming made-up apps must not
    /// make keys for them. Redis away is waited for, as for every other Redis call of a stage;
    /// any other failure is logged and the stage goes on: `push.dlq` has the letters, and failing
    /// now would publish them again with the message's redelivery.
    private func list(_ letters: [DeadLetter]) async {
        let listed = letters.filter { letter in letter.app.map { apps[$0] != nil } ?? false }
        guard !listed.isEmpty else { return }
        let log = deadLetterLog
        do {
            try await Retrying.run("listing \(listed.count) dead letter(s) for the API", logger: logger) {
                try await log.record(listed)
            }
        } catch {
            logger.warning(
                "dead letters not listed for the API; push.dlq has them",
                metadata: ["error": "\(error)", "letters": "\(listed.count)"])
        }
    }

    /// Dead-letters a Kafka message the pipeline cannot process, with its bytes and the reason,
    /// and the app and job id its bytes name when the letter does not (``DeadLetter/naming(from:isConfiguredApp:)``).
    func deadLetter(_ message: KafkaConsumerMessage, reason: String, text: String, field: String? = nil, app: String? = nil) async throws {
        logger.warning(
            "dead-lettering a message: \(text)",
            metadata: [
                "reason": "\(reason)", "topic": "\(message.topic)", "partition": "\(message.partition)",
                "offset": "\(message.offset)",
            ])
        let letter = DeadLetter(
            reason: reason,
            message: text,
            field: field,
            app: app,
            source: DeadLetter.Source(topic: message.topic, partition: message.partition, offset: message.offset),
            original: Data(message.value),
            deadLetteredAt: clock())
        try await deadLetter([letter.naming(from: message.value) { [apps] in apps[$0] != nil }])
        counters.add(.deadLetteredMessages)
    }

    /// Dead-letters a message that failed validation, naming the field.
    func deadLetter(_ message: KafkaConsumerMessage, invalid error: MessageValidationError) async throws {
        try await deadLetter(message, reason: error.code.rawValue, text: error.description, field: error.field)
    }

    /// The app a message names, if it is configured and enabled for `environment`; otherwise
    /// the message is dead-lettered and `nil` returned.
    func app(named id: String, environment: APNsEnvironment, for message: KafkaConsumerMessage) async throws -> PushApp? {
        guard let app = apps[id] else {
            try await deadLetter(message, reason: "unknown-app", text: "app '\(id)' is not configured", field: "app", app: id)
            return nil
        }
        guard app.settings.environments.contains(environment) else {
            try await deadLetter(
                message, reason: "environment-not-enabled",
                text: "app '\(id)' is not enabled for \(environment.rawValue)", field: "environment", app: id)
            return nil
        }
        return app
    }

    /// Processes `message` in a consumer span named `span` (``PipelineSpans``): `true` once
    /// `process` returns, else what ``settleFailure(of:_:stage:)`` decides for its error.
    func handle(
        _ message: KafkaConsumerMessage, span name: String, stage: String, _ process: (any Span) async throws -> Void
    ) async -> Bool {
        await PipelineSpans.consuming(name, message) { span in
            do {
                try await process(span)
                return true
            } catch {
                return await settleFailure(of: message, error, stage: stage)
            }
        }
    }

    /// What a stage does when processing a message failed with an error retrying cannot fix (a
    /// bug, or state Redis refuses): the message goes to `push.dlq` with the error, so its
    /// partition moves on. Cancellation (the worker is stopping) leaves it for redelivery.
    /// Returns whether the message is done.
    func settleFailure(of message: KafkaConsumerMessage, _ error: any Error, stage: String) async -> Bool {
        if error is CancellationError || Task.isCancelled {
            logger.notice("\(stage): message left for redelivery", metadata: ["partition": "\(message.partition)", "offset": "\(message.offset)"])
            return false
        }
        logger.error(
            "\(stage): processing failed; dead-lettering the message",
            metadata: ["error": "\(error)", "partition": "\(message.partition)", "offset": "\(message.offset)"])
        do {
            try await deadLetter(message, reason: "processing-failed", text: "\(stage): \(error)")
            return true
        } catch {
            return false
        }
    }
}
