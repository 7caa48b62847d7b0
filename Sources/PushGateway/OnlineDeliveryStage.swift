import APNsCore
import CoreMetrics
import Foundation
import Kafka
import Logging
import NIOCore
import PushCore
import PushPipeline
import PushStore

/// The gateway's side of online-first delivery: consumes `push.online` (each gateway in its own
/// consumer group, keeping its own key's messages), writes each send as a `push` frame to the
/// device's connection, waits up to the ack timeout for the acks, then settles the message by
/// ``OnlineDeliveryPlan``: an acknowledged send completes its resend-buffer entry and, when the
/// entry was still there (nothing else settled it), counts `online` and a `delivered` receipt;
/// every other send's entry is made due now, so a worker sends it through APNs at once instead of
/// at its fallback time. A message older than the ack timeout when it arrives is left to the
/// resend buffer (its APNs fallback may be on its way). The message is done once settled; a
/// gateway that dies before leaves the entries to fall due by themselves, so nothing is lost.
struct OnlineDeliveryStage: Sendable {
    let gateway: String
    let connections: GatewayConnections
    let acks: OnlineAcks
    let ackTimeout: Duration
    let jobs: JobStore
    let resend: ResendBuffer
    let inbox: InboxStore
    let logger: Logger
    /// Milliseconds since 1970.
    let clock: @Sendable () -> Int64

    func handle(_ message: KafkaConsumerMessage) async -> Bool {
        guard let key = message.key, key.elementsEqual(gateway.utf8) else {
            GatewayMetrics.othersMessages.increment()
            return true
        }
        if let published = message.timestampMilliseconds,
            OnlineDeliveryPlan.isStale(publishedAt: published, now: clock(), ackTimeout: ackTimeout)
        {
            GatewayMetrics.staleMessages.increment()
            return true
        }
        let chunk: DeliveryChunk
        do {
            chunk = try DeliveryChunk.decodeAndValidate(from: Data(message.value))
        } catch {
            // Only workers write here; the sends of a message no gateway can read fall back to
            // APNs through their resend-buffer entries.
            logger.error(
                "push.online message not readable; its sends go through APNs at their fallback time",
                metadata: ["error": "\(error)", "partition": "\(message.partition)", "offset": "\(message.offset)"])
            GatewayMetrics.unreadableMessages.increment()
            return true
        }
        do {
            try await deliver(chunk)
            return true
        } catch {
            logger.warning(
                "online sends not settled; their resend-buffer entries fall due by themselves",
                metadata: ["job": "\(chunk.jobID)", "error": "\(error)"])
            return !(error is CancellationError)
        }
    }

    private func deliver(_ chunk: DeliveryChunk) async throws {
        let job = chunk.job
        let (app, jobID) = (job.app, chunk.jobID)
        let targets = chunk.tokens.map { token in
            connections.current(app: app, device: token).flatMap { $0.channel.isActive ? $0 : nil }
        }
        let written = targets.map { $0 != nil }
        let batch = OnlineAcks.Batch(count: targets.count, expected: written.count(where: { $0 }))
        var expected: [(connection: UInt64, id: String)] = []
        let frames = GatewayMessages.PushFrames(jobID: jobID, job: job)
        for (index, target) in targets.enumerated() {
            guard let (connection, channel) = target else { continue }
            let id = GatewayMessages.messageID(jobID: jobID, position: chunk.positions[index])
            acks.expect(connection: connection, id: id, batch: batch, index: index)
            expected.append((connection, id))
            channel.pipeline.fireUserInboundEventTriggered(GatewayPushEvent(frame: frames.frame(id: id)))
        }
        let results = expected.isEmpty ? Array(repeating: nil, count: targets.count) : await batch.wait(atMost: ackTimeout)
        acks.forget(expected)
        try await settle(OnlineDeliveryPlan(written: written, results: results), of: chunk)
    }

    private func settle(_ plan: OnlineDeliveryPlan, of chunk: DeliveryChunk) async throws {
        let (app, jobID) = (chunk.job.app, chunk.jobID)
        let (jobs, resend) = (self.jobs, self.resend)
        let entry = { (index: Int) in
            ResendEntry(jobID: jobID, token: chunk.tokens[index], attempts: 0, firstFailedAt: 0, lastReason: "online")
        }
        let handedBack = plan.fallbacks.map { entry($0.index) }
        if !handedBack.isEmpty {
            _ = try await Retrying.run("handing back \(handedBack.count) online send(s) of job \(jobID)", logger: logger) {
                try await resend.expedite(app: app, handedBack)
            }
        }
        for (reason, count) in plan.fallbackCounts { GatewayMetrics.sends(count, outcome: reason.rawValue) }
        guard !plan.acknowledged.isEmpty else { return }
        let acknowledged = plan.acknowledged.map(entry)
        // The app has each of them: a delivered receipt, whichever way it ends (a device counts
        // once per event, so one written again after a crash is harmless). Written first, so that
        // a report counting a send online shows its receipt.
        _ = try await Retrying.run("recording \(acknowledged.count) delivered receipt(s) of job \(jobID)", logger: logger) {
            try await jobs.recordReceipts(jobID: jobID, tokens: acknowledged.map(\.token), event: .delivered)
        }
        // An online-only message is in the device's inbox too: the app has it now. Removed before
        // its entry is completed, so that a replay never finds a message counted `online` (a
        // gateway dying in between leaves the entry to end `inboxed`, though the app has it).
        var removed: [Bool] = []
        if chunk.job.delivery == .onlineOnly {
            let messages = plan.acknowledged.map { (token: chunk.tokens[$0], message: InboxMessage(jobID: jobID, position: chunk.positions[$0])) }
            let inbox = self.inbox
            removed = try await Retrying.run("removing \(messages.count) acknowledged message(s) from inboxes", logger: logger) {
                try await inbox.remove(app: app, messages)
            }
        }
        let present = try await ResendCompletion(resend: resend, jobs: jobs, logger: logger).complete(
            app: app, jobID: jobID, acknowledged, counting: acknowledged.map { _ in [.online] })
        GatewayMetrics.sends(plan.acknowledged.count, outcome: "acked")
        // Removed by this ack after its entry was settled `inboxed` (the ack came after the
        // fallback): it counts as read.
        let read = removed.indices.filter { !present[$0] && removed[$0] }
        guard !read.isEmpty else { return }
        try await Retrying.run("counting \(read.count) inbox read(s) of job \(jobID)", logger: logger) {
            try await jobs.increment(jobID: jobID, [.inboxRead: read.count])
        }
    }
}
