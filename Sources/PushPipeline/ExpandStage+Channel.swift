import APNs
import APNsCore
import Foundation
import Kafka
import Logging
import NIOCore
import PushConfiguration
import PushCore
import PushStore

extension ExpandStage {
    /// Sends a job whose audience is a broadcast channel: one request to APNs, which delivers
    /// it to the channel's subscribers. The channel must be one PushFleet created for the app in
    /// the job's environment (its storage policy decides `apns-expiration`: 0 on a channel that
    /// stores nothing, the job's own otherwise); an unknown channel dead-letters the job with
    /// field `audience.channel`.
    ///
    /// The job's statistics count one notification at position 0, accepted or failed with
    /// APNs's reason (``BroadcastRule``). Its sent marker is set once, so a job read again
    /// after a crash is not broadcast again once its outcome is recorded.
    func broadcast(on channelID: APNsChannelID, job: PushJob, jobID: String, app: PushApp, message: KafkaConsumerMessage) async throws -> JobStop? {
        let channels = self.channels
        let record = try await Retrying.run("reading channel \(channelID) of job \(jobID)", logger: outlet.logger) {
            try await channels.channel(app: app.id, environment: job.environment, id: channelID)
        }
        guard let record else {
            try await outlet.deadLetter(
                message, reason: "unknown-channel",
                text:
                    "channel \(channelID) is not a channel of app \(app.id) in \(job.environment.rawValue); create it with `pushfleet channels create`",
                field: "audience.channel", app: app.id)
            return nil
        }
        let jobs = self.jobs
        let sentBefore = try await Retrying.run("reading the sent marker of job \(jobID)", logger: outlet.logger) {
            try await jobs.hasMarkers(jobID: jobID, positions: [0])[0]
        }
        if sentBefore {
            outlet.counters.add(.duplicatesSkipped)
            return nil
        }
        try await setCounters([.targeted: 1], jobID: jobID)
        switch try await stop(of: jobID) {
        case .cancelled(let jobID):
            try await setCounters([.cancelledBeforeExpansion: 1, .expansionComplete: 1], jobID: jobID)
            return .cancelled(jobID: jobID)
        case let stop?:
            return stop
        case nil:
            break
        }
        _ = try await Retrying.run("recording the broadcast of job \(jobID)", logger: outlet.logger) {
            try await jobs.recordChunk(jobID: jobID, chunkID: "c0", tokenCount: 1)
        }

        guard let client = clients[app.id] else { preconditionFailure("every configured app has an APNs client") }
        let request = APNsBroadcastRequest(
            credential: app.credential(for: job.environment), environment: job.environment, bundleID: app.settings.bundleID,
            channelID: channelID, priority: job.headers.effectivePriority,
            expiration: record.messageStoragePolicy == .noMessageStored ? 0 : job.headers.expiration.map(Int64.init),
            requestID: APNsID.random(), payload: ByteBuffer(bytes: job.notification.payloadData()))
        let rule = BroadcastRule()
        var attempt = 0
        var decision: BroadcastRule.Decision
        repeat {
            attempt += 1
            let outcome: Result<APNsResponse, APNsError>
            do throws(APNsError) {
                outcome = .success(try await client.broadcast(request))
            } catch {
                if error.code == .cancelled || error.code == .shutdown || Task.isCancelled { throw CancellationError() }
                outcome = .failure(error)
            }
            decision = rule.decision(after: outcome, attempt: attempt, random: Double.random(in: 0...1))
            if case .retry(let wait) = decision {
                outlet.logger.notice(
                    "broadcast not accepted yet; sending it again",
                    metadata: ["job": "\(jobID)", "channel": "\(channelID)", "attempt": "\(attempt)", "wait": "\(wait)"])
                try await Task.sleep(for: wait)
            }
        } while decision.isRetry

        let counter: JobCounter
        switch decision {
        case .accepted:
            counter = .accepted
            outlet.counters.add(.accepted)
            outlet.metrics.outcome(app: app.id, outcome: "accepted", reason: "")
        case .failed(let reason):
            counter = .failed(reason: reason)
            outlet.counters.add(.permanentFailures)
            outlet.metrics.outcome(app: app.id, outcome: "failed", reason: reason)
            outlet.logger.warning(
                "broadcast refused", metadata: ["job": "\(jobID)", "channel": "\(channelID)", "reason": "\(reason)", "attempts": "\(attempt)"])
        case .retry:
            preconditionFailure("retries end in a final decision")
        }
        outlet.counters.add(.notificationsSent)
        _ = try await Retrying.run("recording the outcome of job \(jobID)", logger: outlet.logger) {
            try await jobs.recordOutcomes(jobID: jobID, [DeliveryOutcomeRecord(position: 0, counter: counter, countsAsSent: true)])
        }
        try await setCounters([.expansionComplete: 1], jobID: jobID)
        return nil
    }
}

extension BroadcastRule.Decision {
    var isRetry: Bool {
        if case .retry = self { return true }
        return false
    }
}
