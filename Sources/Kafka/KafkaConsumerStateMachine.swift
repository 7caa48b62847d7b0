import DequeModule

/// What a ``KafkaConsumer`` decides, without librdkafka, locks or threads: which fetched
/// messages reach the application, who waits for what, when the poll thread stops fetching,
/// what a revoke waits for and commits, and what a close ends. The consumer calls it under its
/// lock and carries out what it answers: resuming the iterating task or a close, waking the poll
/// thread or a revoke, committing offsets.
///
/// `Waiter` is the iterating task's continuation and `DrainWaiter` a close's; the tests use
/// plain values.
struct KafkaConsumerStateMachine<Waiter, DrainWaiter> {
    enum Phase: Equatable {
        /// Fetching and handing out messages.
        case running
        /// A revoke, on the poll thread, waits for the application to return the messages in
        /// progress of these partitions.
        case revoking(Set<KafkaTopicPartition>)
        /// Closed: nothing more is handed out, a revoke no longer waits, and only a revoke's
        /// commit runs.
        case closing
    }

    private(set) var phase: Phase = .running
    private var tracker = PartitionOffsetTracker()
    private var buffer: Deque<KafkaConsumerMessage> = []
    private let bufferCapacity: Int
    /// The iterating task, parked on an empty buffer.
    private var waiter: Waiter?
    /// A close waiting for ``withApplication`` to reach zero.
    private var drainWaiter: DrainWaiter?
    /// Messages with the application per partition of the current assignment: what a revoke
    /// waits for.
    private var handedOut: [KafkaTopicPartition: Int] = [:]
    /// Every message with the application, whichever partition it came from and whether or not
    /// that partition is still assigned: what a close waits for.
    private(set) var withApplication = 0
    /// The poll thread waits for the application to take from a full buffer.
    private var pollerWaitsForRoom = false
    private var periodicCommit: (last: ContinuousClock.Instant, scheduled: Bool)

    init(bufferCapacity: Int, now: ContinuousClock.Instant = .now) {
        precondition(bufferCapacity > 0, "bufferCapacity must be positive")
        self.bufferCapacity = bufferCapacity
        self.periodicCommit = (now, false)
    }

    var isClosing: Bool { phase == .closing }
    var bufferedCount: Int { buffer.count }
    var assignment: [KafkaTopicPartition] { tracker.assignment }

    // MARK: - The application

    enum Take {
        /// The next message. `wakePoller`: the poll thread waits for room, wake it.
        case message(KafkaConsumerMessage, wakePoller: Bool)
        /// The consumer is closed: the sequence ends.
        case finished
        /// Nothing is buffered; the waiter, if one was given, is parked until a fetch or a close.
        case parked
    }

    /// The application asks for a message; with nothing buffered, `waiter` (if any) is parked.
    mutating func take(parking waiter: Waiter?) -> Take {
        if let message = buffer.popFirst() {
            handOut(message)
            defer { pollerWaitsForRoom = false }
            return .message(message, wakePoller: pollerWaitsForRoom)
        }
        if phase == .closing { return .finished }
        if let waiter {
            precondition(self.waiter == nil, "KafkaConsumer.messages supports one iterating task")
            self.waiter = waiter
        }
        return .parked
    }

    /// What a message coming back from the application calls for.
    struct Returned {
        /// A revoke waits for this message's partition: wake it.
        var wakesRevoke = false
        /// The last message a close waited for: resume it.
        var drained: DrainWaiter?
    }

    /// The application finished `message`: its offset becomes committable once every earlier
    /// fetched message of its partition is processed too.
    mutating func processed(_ message: KafkaConsumerMessage) -> Returned {
        returned(message, current: tracker.processed(message.topicPartition, offset: message.offset, epoch: message.epoch))
    }

    /// The application gave `message` up: it is never committed, and no longer waited for.
    mutating func unfinished(_ message: KafkaConsumerMessage) -> Returned {
        returned(message, current: tracker.isCurrent(message.topicPartition, epoch: message.epoch))
    }

    /// `current`: the message belongs to its partition's current assignment (not one revoked
    /// since), so it still counts for that partition.
    private mutating func returned(_ message: KafkaConsumerMessage, current: Bool) -> Returned {
        var result = Returned()
        if current {
            handedOut[message.topicPartition, default: 0] -= 1
            if case .revoking(let partitions) = phase { result.wakesRevoke = partitions.contains(message.topicPartition) }
        }
        withApplication -= 1
        if withApplication <= 0 {
            result.drained = drainWaiter
            drainWaiter = nil
        }
        return result
    }

    private mutating func handOut(_ message: KafkaConsumerMessage) {
        handedOut[message.topicPartition, default: 0] += 1
        withApplication += 1
    }

    // MARK: - The poll thread

    enum Poll: Equatable {
        /// Fetch at most this many messages.
        case fetch(upTo: Int)
        /// The buffer is full: wait until the application takes one (back-pressure; librdkafka
        /// stops fetching once its own bounded queue is full).
        case waitForRoom
    }

    mutating func poll(batchLimit: Int) -> Poll {
        let room = bufferCapacity - buffer.count
        if room <= 0, phase != .closing {
            pollerWaitsForRoom = true
            return .waitForRoom
        }
        return .fetch(upTo: max(1, min(room, batchLimit)))
    }

    /// Records fetched messages; those of partitions not assigned (a stale fetch after a
    /// revoke) are dropped. Answers the parked iterator to resume, with its message.
    mutating func fetched(_ messages: [KafkaConsumerMessage]) -> (waiter: Waiter, message: KafkaConsumerMessage)? {
        guard phase != .closing else { return nil }
        for message in messages {
            guard let epoch = tracker.fetched(message.topicPartition, offset: message.offset) else { continue }
            buffer.append(message.stamped(epoch: epoch))
        }
        guard let waiter, let first = buffer.popFirst() else { return nil }
        self.waiter = nil
        handOut(first)
        return (waiter, first)
    }

    // MARK: - Close

    enum Close {
        /// Already closing: wait for the first close.
        case alreadyClosing
        /// Closing now: resume the iterator, if parked, with the end of the sequence; wake the
        /// poll thread and a revoke.
        case close(resumeIterator: Waiter?)
    }

    mutating func close() -> Close {
        guard phase != .closing else { return .alreadyClosing }
        phase = .closing
        buffer.removeAll()
        defer { waiter = nil }
        return .close(resumeIterator: waiter)
    }

    /// A close waits for the application; `false` when `waiter` is parked, `true` when nothing is
    /// with the application (resume it at once).
    mutating func waitForApplication(_ waiter: DrainWaiter) -> Bool {
        if withApplication <= 0 { return true }
        drainWaiter = waiter
        return false
    }

    /// The close stopped waiting (cancelled or past its deadline): its waiter, if still parked.
    mutating func stopWaitingForApplication() -> DrainWaiter? {
        defer { drainWaiter = nil }
        return drainWaiter
    }

    // MARK: - Rebalance

    mutating func assigned(_ partitions: [KafkaTopicPartition]) {
        for partition in partitions { tracker.assign(partition) }
    }

    /// A revoke of `partitions` starts: their buffered messages stay for the next owner. Answers
    /// whether it waits for their messages in progress: not when closing, as a leave must not be
    /// late.
    mutating func revokeStarted(_ partitions: Set<KafkaTopicPartition>) -> Bool {
        buffer.removeAll { partitions.contains($0.topicPartition) }
        guard phase != .closing else { return false }
        phase = .revoking(partitions)
        return true
    }

    /// Whether the revoke in progress may go on: nothing of its partitions is with the
    /// application any more, or the consumer is closing.
    var revokeMayProceed: Bool {
        guard case .revoking(let partitions) = phase else { return true }
        return partitions.allSatisfy { (handedOut[$0] ?? 0) <= 0 }
    }

    /// The revoke committed what was processed and hands the partitions over. Messages of
    /// theirs still with the application (past the grace period) will come back with a stale
    /// epoch and are no longer counted.
    mutating func revokeFinished(_ partitions: Set<KafkaTopicPartition>) {
        for partition in partitions {
            handedOut[partition] = nil
            tracker.revoke(partition)
        }
        if case .revoking = phase { phase = .running }
    }

    // MARK: - Commits

    /// The offsets to commit now: those of `selection` (a revoke's partitions), or of every
    /// partition (`nil`: the periodic commit and an explicit one, refused once closing, as
    /// librdkafka's close must not meet a commit it did not ask for). They count as committed
    /// until ``commitFailed(_:)``.
    mutating func commit(of selection: Set<KafkaTopicPartition>?) -> [KafkaTopicPartition: Int64] {
        if selection == nil, phase == .closing { return [:] }
        return tracker.takeCommittable(of: selection)
    }

    /// The commit of these partitions failed: the next commit offers their offsets again.
    mutating func commitFailed(_ partitions: some Sequence<KafkaTopicPartition>) {
        for partition in partitions { tracker.forgetCommitted(partition) }
    }

    /// Whether a periodic commit is due now; one is scheduled at a time.
    mutating func periodicCommitDue(now: ContinuousClock.Instant, interval: Duration) -> Bool {
        guard !periodicCommit.scheduled, now - periodicCommit.last >= interval else { return false }
        periodicCommit = (now, true)
        return true
    }

    /// The scheduled periodic commit ran.
    mutating func periodicCommitRan() {
        periodicCommit.scheduled = false
    }
}
