import APNsCore
import Foundation
import PushStore

/// A job's statistics as `pushfleet stats` shows them, computed from its counters in Redis
/// (``JobStore/statistics(jobID:)``).
public struct JobReport: Sendable, Hashable {
    public var jobID: String
    /// Tokens the audience resolved to (for shard jobs: the sum over the shards scanned so far).
    public var targeted: Int
    /// Tokens published in chunks.
    public var expanded: Int
    public var chunks: Int
    /// Notifications that reached APNs and have a final outcome.
    public var sent: Int
    public var accepted: Int
    /// Refusals by APNs reason (invalid tokens and permanent failures).
    public var failedByReason: [String: Int]
    /// Of the refusals, those for invalid tokens (sent to the feedback worker).
    public var invalidTokens: Int
    /// Invalid tokens the feedback worker removed from the registry.
    public var removed: Int
    /// Notifications that went to the resend buffer at least once.
    public var retried: Int
    public var deadLettered: Int
    /// Tokens of redelivered chunks skipped because they were sent already.
    public var duplicatesSkipped: Int
    public var unknownOpenIDs: Int
    public var otherEnvironment: Int
    /// Registry shards of a broadcast or tag job, and how many were scanned completely.
    public var shards: Int
    public var shardsDone: Int
    /// When the job waits in the schedule: its due time (ms since 1970).
    public var scheduledAt: Int?
    public var expansionComplete: Bool
    /// The job was cancelled (``JobStore/cancel(jobID:at:)``).
    public var cancelRequested: Bool
    /// Tokens not sent because the job was cancelled.
    public var cancelled: Int
    /// Devices that reported the notification delivered, and opened (receipts).
    public var delivered: Int
    public var opened: Int
    /// The job was skipped: its idempotency key belongs to another job.
    public var duplicateJob: Bool

    /// Tokens with a final outcome: accepted, refused, dead-lettered or cancelled.
    public var finished: Int { accepted + failed + deadLettered + cancelled }

    /// Refusals, all reasons together.
    public var failed: Int { failedByReason.values.reduce(0, +) }

    /// Every expanded token has a final outcome and the expansion is complete.
    public var isComplete: Bool { expansionComplete && finished >= expanded }

    /// Where the job is: `cancelled`, `complete`, `scheduled` (waiting for its send-at),
    /// `queued` (published, not expanded yet) or `in-progress`.
    public var state: String {
        if cancelRequested { return "cancelled" }
        if isComplete { return "complete" }
        if scheduledAt != nil && expanded == 0 { return "scheduled" }
        if expanded == 0 && targeted == 0 && shards == 0 && !expansionComplete { return "queued" }
        return "in-progress"
    }

    public init(jobID: String, counters: [String: Int]) {
        self.jobID = jobID
        var shardTargeted = 0
        var shardsDone = 0
        var failed: [String: Int] = [:]
        for (name, value) in counters {
            if name.hasPrefix("shard-targeted:") {
                shardTargeted += value
            } else if name.hasPrefix("shard-done:") {
                shardsDone += value > 0 ? 1 : 0
            } else if name.hasPrefix("failed:") {
                failed[String(name.dropFirst("failed:".count)), default: 0] += value
            }
        }
        targeted = (counters["targeted"] ?? 0) + shardTargeted
        expanded = counters["expanded"] ?? 0
        chunks = counters["chunks"] ?? 0
        sent = counters["sent"] ?? 0
        accepted = counters["accepted"] ?? 0
        failedByReason = failed
        invalidTokens = failed.filter { APNsResponseClass(status: 400, reason: APNsReason(rawValue: $0.key)) == .invalidToken }
            .values.reduce(0, +)
        removed = counters["removed"] ?? 0
        retried = counters["retried"] ?? 0
        deadLettered = counters["dead-lettered"] ?? 0
        duplicatesSkipped = counters["duplicates"] ?? 0
        unknownOpenIDs = counters["unknown-openids"] ?? 0
        otherEnvironment = counters["other-environment"] ?? 0
        shards = counters["shards"] ?? 0
        self.shardsDone = shardsDone
        scheduledAt = counters["scheduled-at"]
        expansionComplete = (counters["expansion-complete"] ?? 0) > 0 || (shards > 0 && shardsDone >= shards)
        cancelRequested = counters[JobStore.cancelRequestedCounter] != nil
        cancelled = counters["cancelled"] ?? 0
        delivered = counters[ReceiptEvent.delivered.rawValue] ?? 0
        opened = counters[ReceiptEvent.opened.rawValue] ?? 0
        duplicateJob = (counters["duplicate-job"] ?? 0) > 0
    }

    /// The figures as `name value` lines for people.
    public var lines: [String] {
        var lines = [
            "job            \(jobID)",
            "state          \(state)" + (duplicateJob ? " (skipped: its idempotency key belongs to another job)" : ""),
            "targeted       \(targeted)",
            "expanded       \(expanded) in \(chunks) chunk(s)" + (shards > 0 ? ", \(shardsDone)/\(shards) shards scanned" : ""),
            "sent           \(sent)",
            "accepted       \(accepted)",
            "failed         \(failed) (invalid tokens \(invalidTokens), removed \(removed))",
        ]
        for (reason, count) in failedByReason.sorted(by: { $0.key < $1.key }) {
            lines.append("  \(reason.padding(toLength: 27, withPad: " ", startingAt: 0)) \(count)")
        }
        lines += [
            "retried        \(retried)",
            "dead-lettered  \(deadLettered)",
            "duplicates     \(duplicatesSkipped) skipped",
        ]
        if cancelRequested {
            lines.append("cancelled      \(cancelled) not sent")
        }
        if delivered > 0 || opened > 0 {
            lines.append("receipts       \(delivered) delivered, \(opened) opened")
        }
        if unknownOpenIDs > 0 || otherEnvironment > 0 {
            lines.append("openids        \(unknownOpenIDs) unknown, \(otherEnvironment) on the other environment")
        }
        return lines
    }
}
