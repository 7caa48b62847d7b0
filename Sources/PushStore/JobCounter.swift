/// One figure of a job's statistics (`pf:{job:<jobID>}:stats`, see `schemas/redis.md`): the one
/// list of the names the stages write and ``JobStore/statistics(jobID:)`` reads back.
package enum JobCounter: Hashable, Sendable, CustomStringConvertible {
    // Expansion.
    /// Tokens the audience resolved to (tokens and openid jobs).
    case targeted
    /// Tokens published in chunks (written by ``JobStore/recordChunk(jobID:chunkID:tokenCount:)``).
    case expanded
    /// Chunks published.
    case chunks
    /// Registry shards a broadcast or tag job fans out to.
    case shards
    /// Tokens one shard task found.
    case shardTargeted(Int)
    /// 1 once a shard was scanned completely.
    case shardDone(Int)
    /// Tokens one shard task found and did not publish because the job was cancelled.
    case shardCancelled(Int)
    /// 1 once every token of a tokens or openid job was published.
    case expansionComplete
    /// Tokens of a tokens or openid job not published because the job was cancelled.
    case cancelledBeforeExpansion
    /// Openids without a device.
    case unknownOpenIDs
    /// Openids whose device is registered in the other environment.
    case otherEnvironment
    /// Openids whose device is kept aside as suspect (not sent to).
    case suspectDevices
    /// When a job waits in the schedule: its due time (ms since 1970).
    case scheduledAt
    /// 1 when the job was skipped: its idempotency key belongs to another job.
    case duplicateJob
    /// When a job sent at each device's own time began expanding (ms since 1970): what every
    /// task plans from.
    case timedFrom
    /// Tokens parked for the slot starting at this time (ms since 1970), in chunks recorded once.
    case timed(slot: Int64)
    /// Tokens parked for the slot starting at this time and published when it came.
    case released(slot: Int64)

    // Final outcomes (counted once per token through the sent markers).
    /// Notifications that reached APNs and have a final outcome.
    case sent
    case accepted
    /// Delivered over the online channel: the app acknowledged it (a final outcome; not sent to
    /// APNs, so not in ``sent``).
    case online
    /// Handed to the online channel (a gateway holding the device's connection) with an entry
    /// in the resend buffer; each ends ``online`` or with an APNs outcome. Not final.
    case onlineSent
    /// An online-only job's notification kept in its device's inbox and not acknowledged while
    /// the job was sent (the device was not connected, or did not ack in time): a final outcome,
    /// like ``online``. The device gets it when it connects next.
    case inboxed
    /// Of the ``inboxed``, those acknowledged later, replayed from the inbox: not final (each
    /// is counted once, when its inbox entry is removed).
    case inboxRead
    /// Refused by APNs for this reason (410s, token rejections and other refusals).
    case failed(reason: String)
    /// Notifications that went to the resend buffer at least once.
    case retried
    case deadLettered
    /// Tokens not sent because the job was cancelled.
    case cancelled

    // What the feedback worker did with the job's answers.
    /// Tokens removed from the registry (410).
    case removed
    /// Tokens kept aside as suspect (BadDeviceToken, DeviceTokenNotForTopic).
    case suspect
    /// Tokens found registered in the wrong environment and moved to the other one.
    case movedEnvironment
    /// Registry changes held while the job was watched or paused, and discarded when it was
    /// cancelled.
    case effectsDiscarded

    // Other.
    /// Tokens of redelivered chunks skipped because they were sent already.
    case duplicates
    /// When the job was cancelled (ms since 1970); set once.
    case cancelRequested
    /// Devices that reported a receipt.
    case receipt(ReceiptEvent)

    /// The field name in the statistics hash.
    package var name: String {
        switch self {
        case .targeted: "targeted"
        case .expanded: "expanded"
        case .chunks: "chunks"
        case .shards: "shards"
        case .shardTargeted(let shard): "shard-targeted:\(shard)"
        case .shardDone(let shard): "shard-done:\(shard)"
        case .shardCancelled(let shard): "shard-cancelled:\(shard)"
        case .expansionComplete: "expansion-complete"
        case .cancelledBeforeExpansion: "cancelled-before-expansion"
        case .unknownOpenIDs: "unknown-openids"
        case .otherEnvironment: "other-environment"
        case .suspectDevices: "suspect-devices"
        case .scheduledAt: "scheduled-at"
        case .duplicateJob: "duplicate-job"
        case .timedFrom: "timed-from"
        case .timed(let slot): "timed:\(slot)"
        case .released(let slot): "released:\(slot)"
        case .sent: "sent"
        case .accepted: "accepted"
        case .online: "online"
        case .onlineSent: "online-sent"
        case .inboxed: "inboxed"
        case .inboxRead: "inbox-read"
        case .failed(let reason): "failed:\(reason)"
        case .retried: "retried"
        case .deadLettered: "dead-lettered"
        case .cancelled: "cancelled"
        case .removed: "removed"
        case .suspect: "suspect"
        case .movedEnvironment: "moved-environment"
        case .effectsDiscarded: "effects-discarded"
        case .duplicates: "duplicates"
        case .cancelRequested: "cancel-requested"
        case .receipt(let event): event.rawValue
        }
    }

    /// The counter a field name stands for; `nil` for a name no version of PushFleet writes.
    package init?(name: String) {
        if let counter = Self.fixed[name] {
            self = counter
        } else if name.hasPrefix("failed:"), name.count > "failed:".count {
            self = .failed(reason: String(name.dropFirst("failed:".count)))
        } else if name.hasPrefix("shard-targeted:"), let shard = Int(name.dropFirst("shard-targeted:".count)) {
            self = .shardTargeted(shard)
        } else if name.hasPrefix("shard-done:"), let shard = Int(name.dropFirst("shard-done:".count)) {
            self = .shardDone(shard)
        } else if name.hasPrefix("shard-cancelled:"), let shard = Int(name.dropFirst("shard-cancelled:".count)) {
            self = .shardCancelled(shard)
        } else if name.hasPrefix("timed:"), let slot = Int64(name.dropFirst("timed:".count)) {
            self = .timed(slot: slot)
        } else if name.hasPrefix("released:"), let slot = Int64(name.dropFirst("released:".count)) {
            self = .released(slot: slot)
        } else {
            return nil
        }
    }

    private static let fixed: [String: JobCounter] = {
        let counters: [JobCounter] =
            [
                .targeted, .expanded, .chunks, .shards, .expansionComplete, .cancelledBeforeExpansion, .unknownOpenIDs, .otherEnvironment,
                .suspectDevices, .scheduledAt, .duplicateJob, .timedFrom, .sent, .accepted, .online, .onlineSent, .inboxed, .inboxRead, .retried,
                .deadLettered, .cancelled,
                .removed, .suspect, .movedEnvironment, .effectsDiscarded, .duplicates, .cancelRequested,
            ] + ReceiptEvent.allCases.map(JobCounter.receipt)
        return Dictionary(uniqueKeysWithValues: counters.map { ($0.name, $0) })
    }()

    package var description: String { name }
}
