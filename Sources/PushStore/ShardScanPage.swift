import APNsCore
import PushCore

/// One page of a shard task's scan: some devices and the cursor to continue from.
///
/// Follow ``cursor`` until ``isComplete``. Every device registered for the whole scan (and
/// matching its filter) is returned exactly once; a device bound or unbound during the scan
/// may or may not be.
package struct ShardScanPage: Hashable, Sendable {
    /// The cursor for the next call; `0` when the scan is complete.
    package var cursor: UInt64
    /// The devices of this page (possibly none, even when the scan is not complete).
    package var tokens: [DeviceToken]
    /// The device id of each token (``PackedDevice/id``), the position of its sent state in a job.
    package var ids: [UInt32]

    package init(cursor: UInt64, tokens: [DeviceToken], ids: [UInt32]) {
        precondition(tokens.count == ids.count, "one id per token")
        self.cursor = cursor
        self.tokens = tokens
        self.ids = ids
    }

    /// Whether the scan has gone all the way round.
    package var isComplete: Bool { cursor == 0 }
}

/// One of the tasks a broadcast or tag job fans out to: task `shard` of `count` reads the
/// app's shards `u ≡ shard (mod count)` (``RegistryLayout/shardsOfTask(_:of:)``). A task keeps
/// its count when the app is resharded while it waits.
package struct ShardTask: Hashable, Sendable, CustomStringConvertible {
    package var shard: Int
    package var count: Int

    package init(shard: Int, of count: Int) {
        self.shard = shard
        self.count = count
    }

    /// `<shard>/<count>`, the value of a shard task's Kafka header.
    package var description: String { "\(shard)/\(count)" }

    /// Parses ``description``; `nil` for anything else.
    package init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let shard = Int(parts[0]), let count = Int(parts[1]), count > 0, (0..<count).contains(shard) else { return nil }
        self.init(shard: shard, of: count)
    }
}

/// Which devices a scan returns, always of one environment.
package enum ScanFilter: Hashable, Sendable {
    /// Every device not kept aside as suspect (a broadcast).
    case devices
    /// The devices not kept aside that match a tag expression: every tag of `all`, at least one
    /// of `any` (when not empty), none of `none`.
    case tags(TagExpression)
    /// The devices kept aside as suspect.
    case suspects
}

extension ShardScanPage {
    /// Checks a page's request over `units` units (buckets, location buckets).
    ///
    /// - Throws: ``StoreError`` naming `count` (not positive) or `cursor` (not a unit).
    static func check(cursor: UInt64, count: Int, units: Int) throws(StoreError) {
        guard count > 0 else {
            throw StoreError(.invalidArgument, field: "count", message: "must be positive, is \(count)")
        }
        guard cursor < UInt64(units) else {
            throw StoreError(.invalidArgument, field: "cursor", message: "must be below \(units), is \(cursor)")
        }
    }

    /// A page read from units `start..<units` (buckets, location buckets) a group at a time:
    /// 8 units, doubling up to `largestGroup` while a group brings less than a quarter of
    /// `count`, until the page holds about `count` devices or the units run out. `read` answers
    /// the matching devices of a range of units with their ids; the cursor is the next unit (0
    /// after the last).
    static func fill(
        from start: Int, of units: Int, count: Int, largestGroup: Int,
        read: (Range<Int>) async throws -> [(DeviceToken, UInt32)]
    ) async throws -> ShardScanPage {
        var unit = start
        var group = BucketGroup(first: 8, largest: largestGroup, sparse: count / 4)
        var tokens: [DeviceToken] = []
        var ids: [UInt32] = []
        while unit < units && tokens.count < count {
            let range = group.range(from: unit, of: units)
            let found = try await read(range)
            for (token, id) in found {
                tokens.append(token)
                ids.append(id)
            }
            unit = range.upperBound
            group.read(found.count)
        }
        return ShardScanPage(cursor: unit == units ? 0 : UInt64(unit), tokens: tokens, ids: ids)
    }
}

/// How many units (buckets) a walk over a shard reads at once: `first`, doubling up to
/// `largest` after each read that brought fewer than `sparse` devices. A sparse registry is
/// read in a few large groups instead of many small ones (an app of 40 devices in 16 shards
/// was read 16 buckets at a time: 1,024 round trips for one walk), and a dense one keeps its
/// pages small: the group only grows while a read brings little.
struct BucketGroup: Hashable, Sendable {
    /// The units the next read covers.
    private(set) var size: Int
    let largest: Int
    let sparse: Int

    init(first: Int, largest: Int, sparse: Int) {
        precondition(first >= 1 && largest >= first, "a group of at least one unit, growing to no less than it starts")
        size = first
        self.largest = largest
        self.sparse = sparse
    }

    /// The next read's units from `unit`, within `units`.
    func range(from unit: Int, of units: Int) -> Range<Int> {
        unit..<min(unit + size, units)
    }

    /// Takes what a read brought: a sparse read doubles the next group, up to ``largest``.
    mutating func read(_ found: Int) {
        if found < sparse {
            size = min(size * 2, largest)
        }
    }
}
