import APNsCore
import Foundation
import PushCore
import PushStore

/// A job's statistics as `pushfleet stats` and the API show them, computed from its counters
/// (``JobStore/statistics(jobID:)``) and its control state (``JobStore/control(jobID:)``).
package struct JobReport: Sendable, Hashable {
    package var jobID: String
    /// The campaign's name (the job's `name`), when it has one.
    package var name: String?
    /// How its notifications go out (the job's `delivery`; `apns` when its spec is gone).
    package var delivery: DeliveryRoute = .apns
    /// The campaign this job recalls, and how (its spec's `recall`).
    package var recallOf: JobStore.RecallLink?
    /// The job that recalls this one, and how.
    package var recalledBy: JobStore.RecallLink?
    /// Tokens the audience resolved to (for shard jobs: the sum over the shards scanned so far).
    package var targeted: Int
    /// Tokens published in chunks.
    package var expanded: Int
    package var chunks: Int
    /// Notifications that reached APNs and have a final outcome.
    package var sent: Int
    package var accepted: Int
    /// Notifications delivered over the online channel and acknowledged by the app (not sent
    /// to APNs).
    package var online: Int
    /// Notifications handed to the online channel; each ends ``online`` or with an APNs outcome
    /// (accepted, failed…) when the app did not ack it in time.
    package var onlineSent: Int
    /// Notifications of an online-only job kept in their device's inbox, not acknowledged while
    /// the job was sent: a final outcome (the device gets it when it connects).
    package var inboxed: Int
    /// Of ``inboxed``, those acknowledged later, replayed from the inbox.
    package var inboxRead: Int
    /// Refusals by APNs reason (410s, token rejections and other refusals).
    package var failedByReason: [String: Int]
    /// Of the refusals, those that said the token is gone (410: removed from the registry).
    package var unregistered: Int
    /// Of the refusals, token rejections (`BadDeviceToken`, `DeviceTokenNotForTopic`) and
    /// refusals Apple does not document, by reason: what the circuit breaker judges.
    package var rejectedByReason: [String: Int]
    /// Tokens the feedback worker removed from the registry (410).
    package var removed: Int
    /// Tokens kept aside as suspect, and tokens found in the wrong environment and moved.
    package var suspect: Int
    package var movedEnvironment: Int
    /// Registry changes discarded because the job was cancelled while they were held.
    package var effectsDiscarded: Int
    /// Notifications that went to the resend buffer at least once.
    package var retried: Int
    package var deadLettered: Int
    /// Tokens of redelivered chunks skipped because they were sent already.
    package var duplicatesSkipped: Int
    package var unknownOpenIDs: Int
    package var otherEnvironment: Int
    /// Openids whose device is kept aside as suspect.
    package var suspectDevices: Int
    /// Registry shards of a broadcast or tag job, and how many were scanned completely.
    package var shards: Int
    package var shardsDone: Int
    /// When the job waits in the schedule: its due time (ms since 1970).
    package var scheduledAt: Int?
    package var expansionComplete: Bool
    /// The job was cancelled (``JobStore/cancel(jobID:at:reason:)``).
    package var cancelRequested: Bool
    /// Whether the job may send, why not, its breaker, its operator rate.
    package var control: JobControl
    /// Tokens not sent because the job was cancelled.
    package var cancelled: Int
    /// Of ``cancelled``, tokens counted when their shard or list was read, never published as
    /// chunks, so never part of ``expanded``.
    package var cancelledUnexpanded: Int
    /// Devices that reported the notification delivered, and opened (receipts).
    package var delivered: Int
    package var opened: Int
    /// The job was skipped: its idempotency key belongs to another job.
    package var duplicateJob: Bool
    /// A job sent at each device's own time: the notifications parked for each slot (its
    /// start, ms since 1970) and how many of them went out when it came.
    package var sendTimes: [SendTime]

    /// One slot of a job sent at each device's own time.
    package struct SendTime: Hashable, Sendable {
        /// The slot's start, ms since 1970.
        package var at: Int64
        /// Notifications parked for it.
        package var scheduled: Int
        /// Of them, the ones published when it came.
        package var released: Int
    }

    /// Tokens with a final outcome: accepted, acknowledged online, refused, dead-lettered or
    /// cancelled.
    package var finished: Int { accepted + online + inboxed + failed + deadLettered + cancelled }

    /// Refusals, all reasons together.
    package var failed: Int { failedByReason.values.reduce(0, +) }

    /// Refusals that concern the token: 410s and token rejections.
    package var invalidTokens: Int { unregistered + rejectedByReason.values.reduce(0, +) }

    /// Every expanded token has a final outcome and the expansion is complete. The tokens a
    /// cancel stopped before they were published are final too but never expanded, so they
    /// are added to the expanded side: counted on the finished side alone, they would let a
    /// cancelled broadcast's report complete while published notifications are still in flight.
    package var isComplete: Bool { expansionComplete && finished >= expanded + cancelledUnexpanded }

    /// Where the job is (``JobState``).
    package var state: JobState {
        if cancelRequested || control.state == .cancelled { return .cancelled }
        if control.state == .paused { return .paused }
        if isComplete { return .complete }
        if scheduledAt != nil && expanded == 0 { return .scheduled }
        if expanded == 0 && targeted == 0 && shards == 0 && !expansionComplete { return .queued }
        return .inProgress
    }

    package init(jobID: String, counters: [String: Int], control: JobControl = JobControl()) {
        self.jobID = jobID
        self.control = control
        var values: [JobCounter: Int] = [:]
        var shardTargeted = 0
        var shardsDone = 0
        var cancelledUnexpanded = 0
        var failed: [String: Int] = [:]
        var rejected: [String: Int] = [:]
        var unregistered = 0
        var timed: [Int64: (scheduled: Int, released: Int)] = [:]
        for (name, value) in counters {
            guard let counter = JobCounter(name: name) else { continue }
            switch counter {
            case .timed(let slot): timed[slot, default: (0, 0)].scheduled += value
            case .released(let slot): timed[slot, default: (0, 0)].released += value
            case .shardTargeted: shardTargeted += value
            case .shardDone: shardsDone += value > 0 ? 1 : 0
            case .shardCancelled, .cancelledBeforeExpansion: cancelledUnexpanded += value
            case .failed(let reason):
                failed[reason, default: 0] += value
                switch Self.responseClass(ofFailure: reason) {
                case .unregistered: unregistered += value
                case .tokenRejected, .permanent: rejected[reason, default: 0] += value
                default: break
                }
            default: values[counter, default: 0] += value
            }
        }
        targeted = (values[.targeted] ?? 0) + shardTargeted
        expanded = values[.expanded] ?? 0
        chunks = values[.chunks] ?? 0
        sent = values[.sent] ?? 0
        accepted = values[.accepted] ?? 0
        online = values[.online] ?? 0
        onlineSent = values[.onlineSent] ?? 0
        inboxed = values[.inboxed] ?? 0
        inboxRead = values[.inboxRead] ?? 0
        failedByReason = failed
        self.unregistered = unregistered
        rejectedByReason = rejected
        removed = values[.removed] ?? 0
        suspect = values[.suspect] ?? 0
        movedEnvironment = values[.movedEnvironment] ?? 0
        effectsDiscarded = values[.effectsDiscarded] ?? 0
        retried = values[.retried] ?? 0
        deadLettered = values[.deadLettered] ?? 0
        duplicatesSkipped = values[.duplicates] ?? 0
        unknownOpenIDs = values[.unknownOpenIDs] ?? 0
        otherEnvironment = values[.otherEnvironment] ?? 0
        suspectDevices = values[.suspectDevices] ?? 0
        shards = values[.shards] ?? 0
        self.shardsDone = shardsDone
        scheduledAt = values[.scheduledAt]
        expansionComplete = (values[.expansionComplete] ?? 0) > 0 || (shards > 0 && shardsDone >= shards)
        cancelRequested = values[.cancelRequested] != nil
        cancelled = (values[.cancelled] ?? 0) + cancelledUnexpanded
        self.cancelledUnexpanded = cancelledUnexpanded
        delivered = values[.receipt(.delivered)] ?? 0
        opened = values[.receipt(.opened)] ?? 0
        duplicateJob = (values[.duplicateJob] ?? 0) > 0
        sendTimes = timed.sorted { $0.key < $1.key }.map { SendTime(at: $0.key, scheduled: $0.value.scheduled, released: $0.value.released) }
    }

    /// Reads a job's counters and control state.
    package static func load(jobID: String, from jobs: JobStore) async throws -> JobReport {
        var report = JobReport(jobID: jobID, counters: try await jobs.statistics(jobID: jobID), control: try await jobs.control(jobID: jobID))
        let (json, recalledBy) = try await jobs.specAndRecall(jobID: jobID)
        report.name = json?.objectValue?["name"]?.stringValue
        report.delivery = json?.objectValue?["delivery"]?.stringValue.flatMap(DeliveryRoute.init(rawValue:)) ?? .apns
        report.recallOf = JobRecall.of(spec: json).map { JobStore.RecallLink(jobID: $0.jobID, mode: $0.mode) }
        report.recalledBy = recalledBy
        return report
    }

    /// How APNs's answer is classified for a `failed:<reason>` counter: by the documented
    /// reason, or by the status of an `HTTP<status>` reason (an answer without a reason).
    static func responseClass(ofFailure reason: String) -> APNsResponseClass {
        let apnsReason = APNsReason(rawValue: reason)
        if let status = apnsReason.documentedStatus {
            return APNsResponseClass(status: status, reason: apnsReason)
        }
        if reason.hasPrefix("HTTP"), let status = Int(reason.dropFirst(4)) {
            return APNsResponseClass(status: status, reason: nil)
        }
        return .permanent
    }

    /// The figures as `name value` lines for people.
    package var lines: [String] {
        var lines =
            ["job            \(jobID)"] + (name.map { ["name           \($0)"] } ?? []) + [
                "state          \(state)" + (duplicateJob ? " (skipped: its idempotency key belongs to another job)" : "")
            ]
        if let reason = control.reason, control.state != .running {
            let who = control.pausedBy.map { " by the \($0.rawValue)" } ?? ""
            lines.append("  reason       \(reason)\(who)")
            if control.state == .paused {
                lines.append("  decide       pushfleet jobs resume \(jobID)  |  pushfleet jobs abort \(jobID)")
            }
        }
        if delivery != .apns {
            lines.append("delivery       \(delivery.rawValue)")
        }
        if let rate = control.ratePerSecond {
            lines.append("rate           \(rate)/s (set by an operator)")
        }
        if let recallOf {
            lines.append("recall of      job \(recallOf.jobID) (\(recallOf.mode.rawValue))")
        }
        if let recalledBy {
            lines.append("recalled by    job \(recalledBy.jobID) (\(recalledBy.mode.rawValue))")
        }
        lines += [
            "breaker        \(control.breaker.rawValue)",
            "targeted       \(targeted)",
            "expanded       \(expanded) in \(chunks) chunk(s)" + (shards > 0 ? ", \(shardsDone)/\(shards) shards scanned" : ""),
            "sent           \(sent)",
            "accepted       \(accepted)",
        ]
        if delivery == .onlineOnly {
            lines.append("online         \(online) acknowledged of \(onlineSent) sent over the online channel")
            lines.append("inboxed        \(inboxed) kept in their devices' inboxes, \(inboxRead) of them read since")
        } else if onlineSent > 0 || online > 0 {
            lines.append("online         \(online) acknowledged of \(onlineSent) sent over the online channel (the rest through APNs)")
        }
        lines += [
            "failed         \(failed) (unregistered \(unregistered), removed \(removed); token rejected \(rejectedByReason.values.reduce(0, +)), kept aside \(suspect), moved to the other environment \(movedEnvironment))"
        ]
        for (reason, count) in failedByReason.sorted(by: { $0.key < $1.key }) {
            lines.append("  \(reason.padding(toLength: 27, withPad: " ", startingAt: 0)) \(count)")
        }
        lines += [
            "retried        \(retried)",
            "dead-lettered  \(deadLettered)",
            "duplicates     \(duplicatesSkipped) skipped",
        ]
        if cancelRequested || control.state == .cancelled {
            lines.append("cancelled      \(cancelled) not sent")
        }
        if effectsDiscarded > 0 {
            lines.append("discarded      \(effectsDiscarded) registry change(s) of the cancelled job")
        }
        if delivered > 0 || opened > 0 {
            lines.append("receipts       \(delivered) delivered, \(opened) opened")
        }
        if unknownOpenIDs > 0 || otherEnvironment > 0 || suspectDevices > 0 {
            lines.append("openids        \(unknownOpenIDs) unknown, \(otherEnvironment) on the other environment, \(suspectDevices) kept aside")
        }
        for time in sendTimes {
            let at = RFC3339Timestamp.string(from: Date(timeIntervalSince1970: Double(time.at) / 1000))
            lines.append("waiting for    \(at): \(time.scheduled), \(time.released) of them gone")
        }
        return lines
    }
}

/// Where a job is, as its report, the API and the CLI name it.
package enum JobState: String, Sendable, Hashable, CaseIterable {
    /// Published, not expanded yet.
    case queued
    /// Waiting for its send-at.
    case scheduled
    case inProgress = "in-progress"
    /// Paused by an operator or the circuit breaker (``JobReport/control``).
    case paused
    case complete
    case cancelled
}
