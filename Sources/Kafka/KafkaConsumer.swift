import CRdKafka
import DequeModule
import Dispatch
import FlowControl
import Logging
import ServiceLifecycle
import Synchronization

/// A group consumer: fetches on its own poll thread, hands messages to the application through
/// ``messages`` (an `AsyncSequence` with a bounded buffer), and commits only what the
/// application marked processed.
///
/// Commit rule: per partition, the committed offset never passes a message that was fetched and
/// not yet processed, however out of order messages finish. On a revoke, what is processed is
/// committed synchronously and buffered messages of the revoked partitions are dropped for the
/// next owner. Use a single task to iterate ``messages``.
public final class KafkaConsumer: Service, Sendable {
    typealias StateMachine = KafkaConsumerStateMachine<
        CheckedContinuation<KafkaConsumerMessage?, Never>, CheckedContinuation<Void, Never>
    >

    private let client: RDKafkaClient
    /// The consumer queue (`rd_kafka_queue_get_consumer`), read in batches.
    private let queue: ConsumerQueue
    private let state: Mutex<StateMachine>
    private let configuration: KafkaConsumerConfiguration
    private let logger: Logger
    private let commitQueue = DispatchQueue(label: "pushfleet.kafka.commit")
    /// Where ``close()`` runs its librdkafka calls, one after another.
    private let closeQueue = DispatchQueue(label: "pushfleet.kafka.consumer-close")
    private let pollThread = Mutex<PollThread?>(nil)
    /// Wakes the poll thread when the application takes from a full buffer.
    private let spaceAvailable = DispatchSemaphore(value: 0)
    /// Wakes a revoke waiting on the poll thread when a message of its partitions comes back from
    /// the application, or when the consumer closes.
    private let revokeProgress = DispatchSemaphore(value: 0)

    /// The messages of the subscribed topics, until the consumer closes.
    public var messages: KafkaConsumerMessages { KafkaConsumerMessages(consumer: self) }

    /// Creates the consumer, subscribes and starts fetching.
    ///
    /// - Parameters:
    ///   - onRebalance: partitions assigned and revoked, on the poll thread.
    ///   - onGroupState: the member's group state, every
    ///     ``KafkaConsumerConfiguration/groupStateInterval``, on the poll thread.
    public init(
        configuration: KafkaConsumerConfiguration,
        logger: Logger,
        onRebalance: (@Sendable (KafkaRebalanceEvent) -> Void)? = nil,
        onGroupState: (@Sendable (KafkaGroupState) -> Void)? = nil
    ) throws(KafkaError) {
        let router = RebalanceRouter()
        let callbacks = RDKafkaCallbacks(
            logger: logger,
            onRebalance: { handle, err, partitions in
                router.consumer?.rebalance(handle: handle, err: err, partitions: partitions)
            },
            onStatistics: onGroupState.map { onGroupState in
                { report in
                    if let state = KafkaGroupState(statistics: report) { onGroupState(state) }
                }
            })
        self.client = try RDKafkaClient(
            kind: .consumer, properties: configuration.rdKafkaProperties, callbacks: callbacks)
        self.state = Mutex(StateMachine(bufferCapacity: configuration.bufferCapacity))
        self.configuration = configuration
        self.logger = logger
        self.onRebalance = onRebalance
        if Self.destroyBeforeFirstAssignmentAborts(strategy: configuration.assignmentStrategy) {
            client.keepHandleAtDeinit(true)
        }
        rd_kafka_poll_set_consumer(client.pointer)
        self.queue = ConsumerQueue(pointer: rd_kafka_queue_get_consumer(client.pointer))
        router.consumer = self

        let list = rd_kafka_topic_partition_list_new(Int32(configuration.topics.count))
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for topic in configuration.topics {
            rd_kafka_topic_partition_list_add(list, topic, RD_KAFKA_PARTITION_UA)
        }
        let err = rd_kafka_subscribe(client.pointer, list)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError(code: .consume, message: "subscribe to \(configuration.topics) failed", underlying: KafkaErrorCode(err))
        }
        let thread = PollThread(
            name: "kafka-consumer-poll",
            iteration: { [weak self] in self?.pollOnce() },
            finish: {})
        pollThread.withLock { $0 = thread }
    }

    private let onRebalance: (@Sendable (KafkaRebalanceEvent) -> Void)?

    deinit {
        pollThread.withLock { $0 }?.requestStop()
    }

    /// Messages fetched and waiting for the application.
    public var bufferedCount: Int {
        state.withLock { $0.bufferedCount }
    }

    /// The partitions currently assigned to this consumer.
    public var assignment: [KafkaTopicPartition] {
        state.withLock { $0.assignment }
    }

    /// Records that the application finished with `message`. Its offset becomes committable once
    /// every earlier fetched message of its partition is processed too.
    public func markProcessed(_ message: KafkaConsumerMessage) {
        carryOut(state.withLock { $0.processed(message) })
    }

    /// Records that the application gave `message` up without finishing it (it is stopping):
    /// its offset is never committed by this consumer, so the partition's next owner reads it
    /// again. A revoke or close stops waiting for it.
    public func markUnfinished(_ message: KafkaConsumerMessage) {
        carryOut(state.withLock { $0.unfinished(message) })
    }

    private func carryOut(_ returned: StateMachine.Returned) {
        if returned.wakesRevoke { revokeProgress.signal() }
        returned.drained?.resume()
    }

    /// The subscribed topics.
    public var topics: [String] { configuration.topics }

    /// Messages handed to the application and not yet marked processed or unfinished.
    public var unfinishedCount: Int {
        state.withLock { max($0.withApplication, 0) }
    }

    /// Commits processed offsets now and waits for the broker's answer; a cancelled caller
    /// stops waiting at once (`CancellationError`) while the commit goes on. Once the consumer
    /// is closing it commits nothing: the close's revoke commits what is processed.
    public func commit() async throws {
        try await BlockingCall.run(on: commitQueue) { _ in
            try self.commitProcessed(of: nil)
        }
    }

    /// Runs until graceful shutdown, then closes: see ``close()``.
    public func run() async throws {
        try? await gracefulShutdown()
        await close()
    }

    /// Stops handing out messages and leaves the group at once, committing what is processed,
    /// then waits up to the grace period for the messages already handed out. Idempotent.
    ///
    /// Leaving first hands the partitions over without waiting for this consumer's work in
    /// progress: a LeaveGroup sent after seconds of draining often finds a rebalance under way,
    /// queues behind this member's JoinGroup (which the coordinator holds until the round
    /// completes) and times out, so the group waits a session timeout for a member that is gone.
    /// The messages still in progress are not committed: their partitions' next owners read them
    /// again, and must tolerate a message that is still being finished here (the pipeline's
    /// stages do: chunk leases and sent markers), as they tolerate a crashed owner's.
    ///
    /// The leave is librdkafka's own close (`rd_kafka_consumer_close`), started at once and
    /// nothing else: no unsubscribe before it, no commit beside it. An unsubscribe that meets a
    /// rebalance in progress is postponed by librdkafka and applied later, in the middle of the
    /// close's teardown, and a commit racing that teardown leaves work in progress where
    /// librdkafka 2.0.2 asserts there is none (`rd_kafka_cgrp_terminated`): both aborted workers
    /// at their stop (docs/faults.md, "Stopping a worker").
    ///
    /// Cancelling the calling task ends every wait of the close at once (for the messages in
    /// progress, librdkafka's leave): a process stopping at its deadline never waits on the
    /// broker. What librdkafka was doing goes on in the background until the process exits; the
    /// partitions' next owners read again what was not committed.
    public func close() async {
        guard case .close(let iterator) = state.withLock({ $0.close() }) else {
            await pollThread.withLock { $0 }?.join()
            return
        }
        iterator?.resume(returning: nil)
        spaceAvailable.signal()
        revokeProgress.signal()

        async let left: Void = leaveGroup()
        await waitForApplication(until: .now + configuration.shutdownGracePeriod)
        let unfinished = unfinishedCount
        if unfinished > 0 {
            logger.warning(
                "closing with messages still unfinished; the next owner processes them again",
                metadata: ["kafka.unfinished": "\(unfinished)", "kafka.topics": "\(configuration.topics)"])
        }
        await left
    }

    /// librdkafka's close, on the close's own queue, whether or not the calling task still
    /// waits: the poll thread stops (within one poll, 100 ms), the commits already queued run,
    /// then `rd_kafka_consumer_close` revokes the assignment (the revoke callback, on that queue,
    /// commits what is processed without waiting for what is in progress), leaves the group and
    /// ends the group's handling. The closure keeps the consumer alive until librdkafka returns.
    private func leaveGroup() async {
        do {
            let closed = try await BlockingCall.run(on: closeQueue, startsEvenIfCancelled: true) { _ in
                let thread = self.pollThread.withLock { $0 }
                thread?.requestStop()
                thread?.joinBlocking()
                // A periodic commit the poll thread queued runs before the close starts, never
                // during it; later ones are refused (``commitProcessed(of:)``).
                self.commitQueue.sync {}
                return rd_kafka_consumer_close(self.client.pointer)
            }
            if closed != RD_KAFKA_RESP_ERR_NO_ERROR {
                logger.info("consumer close reported an error", metadata: ["kafka.error": "\(KafkaErrorCode(closed).name)"])
            }
        } catch {
            logger.info(
                "stopped waiting for the consumer's close (cancelled): it goes on in the background; the group notices the member gone at the latest at its session timeout"
            )
        }
    }

    /// Returns when every message handed to the application was marked processed or
    /// unfinished, at `deadline`, or when the calling task is cancelled, whichever comes first.
    private func waitForApplication(until deadline: ContinuousClock.Instant) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(until: deadline) }
            group.addTask { await self.applicationDrained() }
            _ = await group.next()
            group.cancelAll()
        }
    }

    /// Waits for the last message with the application to come back, or for cancellation.
    private func applicationDrained() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    Task.isCancelled || state.waitForApplication(continuation)
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.stopWaitingForApplication() }?.resume()
        }
    }

    // MARK: - Delivery to the application

    func next() async -> KafkaConsumerMessage? {
        // Fast path: a buffered message needs no continuation.
        if let ready = take(parking: nil) { return ready }
        return await withCheckedContinuation { continuation in
            if let ready = take(parking: continuation) { continuation.resume(returning: ready) }
        }
    }

    /// The next message, or `.some(nil)` once the consumer is closed; `nil` when nothing is
    /// buffered yet, and then `waiter`, if given, is parked until the poll thread has one.
    private func take(parking waiter: CheckedContinuation<KafkaConsumerMessage?, Never>?) -> KafkaConsumerMessage?? {
        switch state.withLock({ $0.take(parking: waiter) }) {
        case .message(let message, let wakePoller):
            if wakePoller { spaceAvailable.signal() }
            return .some(message)
        case .finished:
            return .some(nil)
        case .parked:
            return nil
        }
    }

    // MARK: - Poll thread

    private func pollOnce() {
        // Backpressure: with the buffer full, stop polling. librdkafka then stops fetching once
        // its own bounded queue (`queued.max.messages.kbytes`) is full. Rebalance callbacks,
        // which also arrive through polling, wait until the application takes a message.
        guard case .fetch(let batchLimit) = state.withLock({ $0.poll(batchLimit: Self.fetchBatchLimit) }) else {
            _ = spaceAvailable.wait(timeout: .now() + .milliseconds(100))
            scheduleCommitIfDue()
            return
        }
        withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<rd_kafka_message_t>?.self, capacity: batchLimit) { batch in
            // Waits up to 100 ms for one message, then takes what else is fetched already without
            // waiting: a batch call waits its whole timeout for a *full* batch (librdkafka's
            // documented behaviour), so asking for 500 at once held every message of a quiet
            // topic up to 100 ms in this thread, at each of a job's three hops. Both calls serve
            // rebalance callbacks too, on this thread.
            var count = rd_kafka_consume_batch_queue(queue.pointer, 100, batch.baseAddress, 1)
            guard count > 0 else { return }
            if batchLimit > 1 {
                count += max(0, rd_kafka_consume_batch_queue(queue.pointer, 0, batch.baseAddress! + 1, batchLimit - 1))
            }
            var messages: [KafkaConsumerMessage] = []
            messages.reserveCapacity(count)
            for index in 0..<count {
                guard let raw = batch[index] else { continue }
                if let message = convert(raw) { messages.append(message) }
                rd_kafka_message_destroy(raw)
            }
            accept(messages)
        }
        scheduleCommitIfDue()
    }

    /// The most messages taken from librdkafka in one call.
    private static let fetchBatchLimit = 500

    /// The topic name of the last message: most consecutive messages share it.
    private let lastTopic = Mutex<(handle: TopicPointer?, name: String)>((nil, ""))

    private struct TopicPointer: Equatable, @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// Copies a fetched message out of librdkafka's memory. Its epoch is set by ``accept(_:)``.
    private func convert(_ raw: UnsafeMutablePointer<rd_kafka_message_t>) -> KafkaConsumerMessage? {
        let message = raw.pointee
        guard message.err == RD_KAFKA_RESP_ERR_NO_ERROR, let rkt = message.rkt else {
            logger.info("consume error", metadata: ["kafka.error": "\(KafkaErrorCode(message.err))"])
            return nil
        }
        let topic = lastTopic.withLock { last in
            if last.handle != TopicPointer(pointer: rkt) {
                last = (TopicPointer(pointer: rkt), String(cString: rd_kafka_topic_name(rkt)))
            }
            return last.name
        }
        let value = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: message.len)) } ?? []
        let key = message.key.map { Array(UnsafeRawBufferPointer(start: $0, count: message.key_len)) }
        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let timestamp = rd_kafka_message_timestamp(raw, &timestampType)
        return KafkaConsumerMessage(
            topic: topic, partition: message.partition, offset: message.offset, key: key, value: value,
            headers: Self.headers(of: raw),
            timestampMilliseconds: timestampType == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? nil : timestamp,
            epoch: 0)
    }

    /// Records fetched messages and hands the first to a waiting iterator.
    private func accept(_ messages: [KafkaConsumerMessage]) {
        if let (waiter, message) = state.withLock({ $0.fetched(messages) }) {
            waiter.resume(returning: message)
        }
    }

    private static func headers(of raw: UnsafeMutablePointer<rd_kafka_message_t>) -> [KafkaHeader] {
        var headers: OpaquePointer?
        guard rd_kafka_message_headers(raw, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR, let headers else { return [] }
        var result: [KafkaHeader] = []
        var name: UnsafePointer<CChar>?
        var value: UnsafeRawPointer?
        var size = 0
        var index = 0
        while rd_kafka_header_get_all(headers, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
            let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
            result.append(KafkaHeader(name: name.map { String(cString: $0) } ?? "", value: bytes))
            index += 1
        }
        return result
    }

    private func scheduleCommitIfDue() {
        let interval = configuration.commitInterval
        guard state.withLock({ $0.periodicCommitDue(now: .now, interval: interval) }) else { return }
        commitQueue.async {
            do throws(KafkaError) {
                try self.commitProcessed(of: nil)
            } catch {
                self.logger.info("periodic commit failed; will retry", metadata: ["error": "\(error)"])
            }
            self.state.withLock { $0.periodicCommitRan() }
        }
    }

    /// Synchronously commits processed offsets: those of `selection` (a revoke's partitions),
    /// or of every partition (`nil`: the periodic commit and ``commit()``, which a closing
    /// consumer refuses, as librdkafka's close must not meet a commit it did not ask for). Runs
    /// on `commitQueue`, so commits never reorder.
    private func commitProcessed(of selection: Set<KafkaTopicPartition>?) throws(KafkaError) {
        let offsets = state.withLock { $0.commit(of: selection) }
        guard !offsets.isEmpty else { return }
        let list = rd_kafka_topic_partition_list_new(Int32(offsets.count))
        defer { rd_kafka_topic_partition_list_destroy(list) }
        for (partition, offset) in offsets {
            rd_kafka_topic_partition_list_add(list, partition.topic, partition.partition)?.pointee.offset = offset
        }
        let err = rd_kafka_commit(client.pointer, list, 0)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            // Let the next commit try these offsets again.
            state.withLock { $0.commitFailed(offsets.keys) }
            throw KafkaError(
                code: .commit, message: "commit of \(offsets.count) partitions failed", underlying: KafkaErrorCode(err), isRetryable: true)
        }
        logger.trace("committed", metadata: ["kafka.offsets": "\(offsets)"])
    }

    // MARK: - Rebalance (on the poll thread)

    fileprivate func rebalance(
        handle: OpaquePointer, err: rd_kafka_resp_err_t,
        partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>
    ) {
        var changed: [KafkaTopicPartition] = []
        if let elements = partitions.pointee.elems {
            for index in 0..<Int(partitions.pointee.cnt) {
                guard let topic = elements[index].topic else { continue }
                changed.append(KafkaTopicPartition(topic: String(cString: topic), partition: elements[index].partition))
            }
        }
        // Cooperative (incremental) rebalancing hands over only the partitions that move: the
        // others keep being consumed through the rebalance. Eager rebalancing revokes all.
        let cooperative = Self.isCooperative(
            protocolName: rd_kafka_rebalance_protocol(handle).map { String(cString: $0) },
            strategy: configuration.assignmentStrategy)
        switch err {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            state.withLock { $0.assigned(changed) }
            // The assignor has its state now: destroying the handle is safe again.
            client.keepHandleAtDeinit(false)
            if cooperative {
                report(rd_kafka_incremental_assign(handle, partitions), "incremental assign")
            } else {
                rd_kafka_assign(handle, partitions)
            }
            logger.debug("partitions assigned", metadata: ["kafka.partitions": "\(changed)"])
            onRebalance?(.assigned(changed))
        default:
            let revoked = Set(changed)
            // Buffered messages of the revoked partitions stay for the next owner; those already
            // with the application get up to the revoke grace period to finish, so the next
            // owner does not process them a second time while they are still in progress. A
            // closing consumer does not wait: it is leaving, and its leave must not be late.
            let waits = state.withLock { $0.revokeStarted(revoked) }
            let deadline = ContinuousClock.now + (waits ? configuration.revokeGracePeriod : .zero)
            // Woken by each message of the revoked partitions coming back, and by a close.
            while !state.withLock({ $0.revokeMayProceed }) {
                let remaining = deadline - ContinuousClock.now
                if remaining <= .zero { break }
                _ = revokeProgress.wait(timeout: .now() + .milliseconds(Int(remaining.roundedUpMilliseconds)))
            }
            do {
                try commitQueue.sync { try commitProcessed(of: revoked) }
            } catch {
                logger.info("commit on revoke failed; the next owner re-processes", metadata: ["error": "\(error)"])
            }
            state.withLock { $0.revokeFinished(revoked) }
            if cooperative && err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS {
                report(rd_kafka_incremental_unassign(handle, partitions), "incremental unassign")
            } else {
                rd_kafka_assign(handle, nil)
            }
            logger.debug("partitions revoked", metadata: ["kafka.partitions": "\(changed)"])
            onRebalance?(.revoked(changed))
        }
    }

    /// Whether a rebalance hands over partitions incrementally. `protocolName` is librdkafka's
    /// answer (`COOPERATIVE`, `EAGER`, `NONE`), which is `nil` when the group's queue no longer
    /// takes requests (a consumer closing revokes its partitions then); the configured strategy
    /// decides in that case, as it decided the protocol when the group was joined.
    static func isCooperative(protocolName: String?, strategy: String) -> Bool {
        if let protocolName { return protocolName == "COOPERATIVE" }
        return strategy.contains("cooperative")
    }

    /// Whether destroying this consumer's handle before its first assignment would abort the
    /// process: librdkafka before 2.3.0 asserts on the cooperative-sticky assignor's missing
    /// state when a consumer is destroyed between joining its group and its first assignment
    /// (librdkafka #4381; Debian 12 ships 2.0.2). Such a consumer's handle is left to the
    /// process's exit instead: a worker stopped during a rebalance exits anyway.
    static func destroyBeforeFirstAssignmentAborts(strategy: String, libraryVersion: Int32 = RDKafkaClient.libraryVersion) -> Bool {
        strategy.contains("cooperative") && libraryVersion < 0x0203_0000
    }

    /// Logs and releases the error of an incremental (un)assign; librdkafka rejoins the group
    /// on its own after one.
    private func report(_ error: OpaquePointer?, _ what: String) {
        guard let error else { return }
        logger.warning("\(what) failed", metadata: ["error": "\(String(cString: rd_kafka_error_string(error)))"])
        rd_kafka_error_destroy(error)
    }
}

/// The consumer's queue handle, released before the client it belongs to.
private final class ConsumerQueue: @unchecked Sendable {
    /// Used by the poll thread only, and destroyed when the consumer is.
    let pointer: OpaquePointer

    init(pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        rd_kafka_queue_destroy(pointer)
    }
}

/// Lets the rebalance callback, created before the consumer exists, reach it.
private final class RebalanceRouter: @unchecked Sendable {
    /// Written once in `KafkaConsumer.init` before any poll can run the callback.
    weak var consumer: KafkaConsumer?
}

/// The messages of a ``KafkaConsumer``, in fetch order per partition.
public struct KafkaConsumerMessages: AsyncSequence, Sendable {
    public typealias Element = KafkaConsumerMessage
    let consumer: KafkaConsumer

    public struct AsyncIterator: AsyncIteratorProtocol {
        let consumer: KafkaConsumer

        public mutating func next() async -> KafkaConsumerMessage? {
            await consumer.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(consumer: consumer)
    }
}
