import Foundation
import Kafka
import Logging
import PushConfiguration
import PushCore
import PushStore
import Tracing

/// Consumes `push.deliveries`: for each chunk, takes the chunk's lease (``ChunkLease``: one
/// sender at a time per chunk), skips the tokens whose sent marker (the job's bit at the
/// token's position) exists (a chunk
/// delivered again after a crash or rebalance), sends the rest and settles them. The chunk's
/// offset is marked processed only when every token has a final outcome or sits in the resend
/// buffer. A chunk of a paused job is left alone (the job is published again when it resumes,
/// and its chunks with it). An online-first chunk's connected devices go to their gateways
/// first (``OnlineRouter``), the rest to APNs.
struct SendStage: Sendable {
    let outlet: PipelineOutlet
    let jobs: JobStore
    let controls: JobControlCache
    let online: OnlineRouter
    let sender: NotificationSender

    /// Handles one chunk; `false` when the worker stopped before it finished.
    func handle(_ message: KafkaConsumerMessage) async -> Bool {
        await outlet.handle(message, span: "send chunk", stage: "send stage") { span in
            try await process(message, span: span)
        }
    }

    private func process(_ message: KafkaConsumerMessage, span: any Span) async throws {
        let chunk: DeliveryChunk
        do {
            chunk = try DeliveryChunk.decodeAndValidate(from: Data(message.value))
        } catch {
            try await outlet.deadLetter(message, invalid: error)
            return
        }
        let job = chunk.job
        if span.isRecording {
            span.attributes["pushfleet.app"] = job.app
            span.attributes["pushfleet.job"] = chunk.jobID
            span.attributes["pushfleet.chunk"] = chunk.chunkID
            span.attributes["pushfleet.tokens"] = chunk.tokens.count
        }
        guard let app = try await outlet.app(named: job.app, environment: job.environment, for: message) else { return }
        let jobID = chunk.jobID
        let controls = self.controls
        let state = try await Retrying.run("checking whether job \(jobID) is paused", logger: outlet.logger) {
            try await controls.state(jobID)
        }
        if state == .paused {
            outlet.counters.add(.chunksLeftForResume)
            outlet.logger.debug("job paused: chunk left for its resume", metadata: ["job": "\(jobID)", "chunk": "\(chunk.chunkID)"])
            return
        }
        let lease = ChunkLease(outlet: outlet, jobs: jobs, jobID: jobID, chunkID: chunk.chunkID)
        try await lease.hold {
            let marked = try await Retrying.run("reading sent markers of job \(jobID)", logger: outlet.logger) {
                try await jobs.hasMarkers(jobID: jobID, positions: chunk.positions)
            }
            var pending: [Delivery] = []
            pending.reserveCapacity(chunk.tokens.count)
            for index in chunk.tokens.indices where !marked[index] {
                pending.append(Delivery(token: chunk.tokens[index], position: chunk.positions[index]))
            }
            try await outlet.skippedDuplicates(
                chunk.tokens.count - pending.count, jobID: jobID, "chunk seen before: skipping tokens already sent",
                metadata: ["chunk": "\(chunk.chunkID)"])
            // A cancelled job's sends all go to the sender, which settles them as cancelled.
            let apns = state == .running ? try await online.route(pending, of: chunk) : pending
            span.attributes["pushfleet.sending"] = apns.count
            try await sender.deliver(apns, of: job, jobID: jobID, app: app, tags: chunk.addressedTags)
        }
        outlet.counters.add(.chunksSent)
    }
}
