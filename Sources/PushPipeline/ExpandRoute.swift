import APNsCore
import Foundation
import PushCore

/// What the expand stage does with a valid message of `push.jobs`, decided from the message
/// alone (no I/O): ``ExpandStage`` carries it out.
enum ExpandRoute: Equatable, Sendable {
    /// How a job's audience becomes notifications.
    enum Expansion: Equatable, Sendable {
        /// Its own tokens, duplicates dropped, in chunks.
        case list([DeviceToken])
        /// A Live Activity's update tokens, read from the registry, in chunks.
        case activity(LiveActivityID)
        /// Openids resolved to their devices, in chunks.
        case openIDs([String])
        /// A broadcast or tag job: one shard task per task of the registry layout.
        case fanOut
        /// One request to APNs for a broadcast channel's subscribers.
        case channel(APNsChannelID)
    }

    /// A shard task of a broadcast or tag job (its `shard` header): scan its shards.
    case shardTask(String)
    /// A job: parked until `dueAt` (milliseconds since the epoch) when its send-at is more than
    /// half a second ahead, else expanded now.
    case job(dueAt: Int64?, Expansion)

    /// Send-at this close to `now`, or past, means now.
    static let scheduleThreshold: TimeInterval = 0.5

    init(_ job: PushJob, shardHeader: [UInt8]?, now: Date) {
        if let shardHeader {
            self = .shardTask(String(decoding: shardHeader, as: UTF8.self))
            return
        }
        var dueAt: Int64?
        if let sendAt = job.sendAt, sendAt.timeIntervalSince(now) > Self.scheduleThreshold {
            dueAt = Int64((sendAt.timeIntervalSince1970 * 1000).rounded(.up))
        }
        let expansion: Expansion
        switch job.audience {
        case .tokens(let tokens):
            var seen = Set<DeviceToken>()
            expansion = .list(tokens.filter { seen.insert($0).inserted })
        case .activity(let activity): expansion = .activity(activity)
        case .openIDs(let openIDs): expansion = .openIDs(openIDs)
        case .tags, .broadcast, .area: expansion = .fanOut
        case .channel(let channelID): expansion = .channel(channelID)
        }
        self = .job(dueAt: dueAt, expansion)
    }
}
