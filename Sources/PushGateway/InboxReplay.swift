import APNsCore
import CoreMetrics
import Foundation
import Logging
import NIOCore
import PushCore
import PushPipeline
import PushStore
import Synchronization

/// Replays a device's inbox when it connects: reads the messages of online-only jobs waiting
/// for it (one read), writes each as a `push` frame with `"replay":true`, waits up to the ack
/// timeout, and removes what the app acknowledged; each message removed gets a `delivered`
/// receipt and counts `inbox-read` on its job (or `online`, when its send was still waiting for
/// its fallback). What is not acknowledged stays for the next connection.
/// A message whose job is gone (its payload expired) or cancelled is removed unsent.
struct InboxReplay: Sendable {
    let inbox: InboxStore
    let jobs: JobStore
    let resend: ResendBuffer
    let acks: OnlineAcks
    let ackTimeout: Duration
    let frames: ReplayFrames
    let logger: Logger

    /// Replays `device`'s inbox on `connection` in the background.
    func start(app: String, device: DeviceToken, connection: UInt64, channel: any Channel) {
        Task {
            do {
                try await replay(app: app, device: device, connection: connection, channel: channel)
            } catch {
                logger.warning(
                    "inbox not replayed; its messages wait for the next connection",
                    metadata: ["app": "\(app)", "connection": "\(connection)", "error": "\(error)"])
            }
        }
    }

    func replay(app: String, device: DeviceToken, connection: UInt64, channel: any Channel) async throws {
        let entries = try await inbox.pending(app: app, token: device)
        guard !entries.isEmpty else { return }
        var byJob: [String: GatewayMessages.PushFrames?] = [:]
        for jobID in Set(entries.map(\.message.jobID)) {
            byJob[jobID] = try await frames.frames(jobID: jobID, jobs: jobs)
        }
        let (live, gone) = (entries.filter { byJob[$0.message.jobID]! != nil }, entries.filter { byJob[$0.message.jobID]! == nil })
        if !gone.isEmpty {
            try await inbox.remove(app: app, gone.map { (device, $0.message) })
            GatewayMetrics.inboxDropped.increment(by: gone.count)
        }
        guard !live.isEmpty, channel.isActive else { return }
        let batch = OnlineAcks.Batch(count: live.count, expected: live.count)
        var expected: [(connection: UInt64, id: String)] = []
        for (index, entry) in live.enumerated() {
            let id = entry.message.id
            acks.expect(connection: connection, id: id, batch: batch, index: index)
            expected.append((connection, id))
            channel.pipeline.fireUserInboundEventTriggered(GatewayPushEvent(frame: byJob[entry.message.jobID]!!.frame(id: id)))
        }
        GatewayMetrics.replayed.increment(by: live.count)
        let results = await batch.wait(atMost: ackTimeout)
        acks.forget(expected)
        let acknowledged = live.indices.filter { results[$0] == .acked }.map { live[$0].message }
        guard !acknowledged.isEmpty else { return }
        let removed = try await Retrying.run("removing \(acknowledged.count) read message(s) from an inbox", logger: logger) { [inbox] in
            try await inbox.remove(app: app, acknowledged.map { (device, $0) })
        }
        try await settleRead(zip(acknowledged, removed).filter(\.1).map(\.0), app: app, device: device)
    }

    /// Settles the messages the app read from its inbox (acknowledged, and removed by this
    /// replay), per job: a `delivered` receipt first (a device counts once per event, so writing
    /// it again is harmless); then the message's online send ends `online` if its resend-buffer
    /// entry still waits (the gateway it was handed to died before the ack or the fallback), and
    /// otherwise, counted `inboxed` already, it counts `inbox-read`. A gateway removes an
    /// acknowledged message from the inbox before it completes its entry, so a message a replay
    /// finds was never counted `online`.
    private func settleRead(_ read: [InboxMessage], app: String, device: DeviceToken) async throws {
        let jobs = self.jobs
        let completion = ResendCompletion(resend: resend, jobs: jobs, logger: logger)
        for (jobID, messages) in Dictionary(grouping: read, by: \.jobID) {
            _ = try await Retrying.run("recording a delivered receipt of job \(jobID)", logger: logger) {
                try await jobs.recordReceipts(jobID: jobID, tokens: [device], event: .delivered)
            }
            // A device has one send, and at most one resend-buffer entry, per job.
            let entry = ResendEntry(jobID: jobID, token: device, attempts: 0, firstFailedAt: 0, lastReason: "online")
            let waited = try await completion.complete(app: app, jobID: jobID, [entry], counting: [[.online]])
            guard waited == [false] else { continue }
            try await Retrying.run("counting \(messages.count) inbox read(s) of job \(jobID)", logger: logger) {
                try await jobs.increment(jobID: jobID, [.inboxRead: messages.count])
            }
        }
    }
}

/// The replay frames of the online-only jobs whose messages wait in inboxes, by job id: read
/// from the job's stored spec once, then kept for ``freshness`` (so a cancel stops its replays
/// within that time); `nil` for a job whose spec is gone or that was cancelled. At most
/// ``capacity`` jobs (all forgotten when full).
final class ReplayFrames: Sendable {
    static let capacity = 1_024
    static let freshness = Duration.seconds(10)

    private struct Cached {
        var frames: GatewayMessages.PushFrames?
        var readAt: ContinuousClock.Instant
    }

    private let cache = Mutex<[String: Cached]>([:])

    func frames(jobID: String, jobs: JobStore) async throws -> GatewayMessages.PushFrames? {
        let now = ContinuousClock.now
        if let cached = cache.withLock({ $0[jobID] }), now - cached.readAt < Self.freshness { return cached.frames }
        var frames: GatewayMessages.PushFrames?
        if let json = try await jobs.spec(jobID: jobID), let job = try? PushJob.decodeAndValidate(from: Data(json)),
            try await jobs.control(jobID: jobID).state != .cancelled
        {
            frames = GatewayMessages.PushFrames(jobID: jobID, job: job, replay: true)
        }
        cache.withLock { cache in
            if cache.count >= Self.capacity { cache.removeAll() }
            cache[jobID] = Cached(frames: frames, readAt: now)
        }
        return frames
    }
}
