import DequeModule

/// Which offsets of each assigned partition are safe to commit.
///
/// Messages may finish out of order, but a commit says "everything before this offset is done",
/// so per partition the tracker keeps the offsets handed out in fetch order and advances the
/// committable offset only over a contiguous processed prefix. Each assignment of a partition
/// gets a new epoch: an acknowledgement from before a revoke is ignored, so a message that went
/// to another owner in between can never move this owner's commit.
///
/// A pure state machine (no I/O, no locks): ``KafkaConsumer`` calls it under its lock.
struct PartitionOffsetTracker {
    enum Entry {
        case fetched
        case processed
    }

    struct PartitionState {
        let epoch: UInt64
        /// Offsets fetched and not yet part of a committable prefix, in fetch order.
        var pending: Deque<(offset: Int64, entry: Entry)> = []
        /// The next offset to consume after the processed prefix; what a commit stores.
        var committable: Int64?
        /// What was last committed (or handed to a commit) for this assignment.
        var committed: Int64?
    }

    private(set) var partitions: [KafkaTopicPartition: PartitionState] = [:]
    private var nextEpoch: UInt64 = 1

    /// Starts tracking a newly assigned partition; returns its epoch.
    @discardableResult
    mutating func assign(_ partition: KafkaTopicPartition) -> UInt64 {
        let epoch = nextEpoch
        nextEpoch += 1
        partitions[partition] = PartitionState(epoch: epoch)
        return epoch
    }

    /// Stops tracking a revoked partition; later acknowledgements for it are ignored.
    mutating func revoke(_ partition: KafkaTopicPartition) {
        partitions[partition] = nil
    }

    var assignment: [KafkaTopicPartition] { partitions.keys.sorted() }

    /// Records a fetched message; returns the epoch to stamp on it, or `nil` when the partition
    /// is not assigned (a stale fetch after a revoke, which must not reach the application).
    mutating func fetched(_ partition: KafkaTopicPartition, offset: Int64) -> UInt64? {
        update(partition) { state in
            if let last = state.pending.last?.offset, offset <= last { return nil }
            if state.pending.isEmpty, let committable = state.committable, offset < committable { return nil }
            state.pending.append((offset, .fetched))
            return state.epoch
        } ?? nil
    }

    /// Marks a message processed. Returns `false` when the acknowledgement is stale (another
    /// epoch) or unknown.
    @discardableResult
    mutating func processed(_ partition: KafkaTopicPartition, offset: Int64, epoch: UInt64) -> Bool {
        update(partition) { state in
            guard state.epoch == epoch, let index = Self.index(of: offset, in: state.pending),
                state.pending[index].entry == .fetched
            else { return false }
            state.pending[index].entry = .processed
            while let first = state.pending.first, first.entry == .processed {
                state.committable = first.offset + 1
                state.pending.removeFirst()
            }
            return true
        } ?? false
    }

    /// Whether `epoch` is the current assignment of `partition`.
    func isCurrent(_ partition: KafkaTopicPartition, epoch: UInt64) -> Bool {
        partitions[partition]?.epoch == epoch
    }

    /// Mutates a partition's state in place (copying it out would copy its deque on every
    /// message); `nil` when the partition is not assigned.
    private mutating func update<Result>(
        _ partition: KafkaTopicPartition, _ body: (inout PartitionState) -> Result
    ) -> Result? {
        guard let index = partitions.index(forKey: partition) else { return nil }
        return body(&partitions.values[index])
    }

    /// Offsets that have advanced past the last commit, to hand to a commit now.
    mutating func takeCommittable(of selection: Set<KafkaTopicPartition>? = nil) -> [KafkaTopicPartition: Int64] {
        var result: [KafkaTopicPartition: Int64] = [:]
        for (partition, state) in partitions {
            if let selection, !selection.contains(partition) { continue }
            guard let committable = state.committable, committable != state.committed else { continue }
            result[partition] = committable
            partitions[partition]?.committed = committable
        }
        return result
    }

    /// Messages of a partition fetched and not yet processed.
    func unprocessedCount(of partition: KafkaTopicPartition) -> Int {
        partitions[partition]?.pending.lazy.filter { $0.entry == .fetched }.count ?? 0
    }

    private static func index(of offset: Int64, in pending: Deque<(offset: Int64, entry: Entry)>) -> Int? {
        var low = 0
        var high = pending.count - 1
        while low <= high {
            let middle = (low + high) / 2
            let value = pending[middle].offset
            if value == offset { return middle }
            if value < offset { low = middle + 1 } else { high = middle - 1 }
        }
        return nil
    }
}

extension PartitionOffsetTracker {
    /// After a failed commit: the partition's offset is offered again by the next
    /// ``takeCommittable(of:)``.
    mutating func forgetCommitted(_ partition: KafkaTopicPartition) {
        partitions[partition]?.committed = nil
    }
}
