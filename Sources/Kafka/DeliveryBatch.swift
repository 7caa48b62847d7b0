import CRdKafka
import Synchronization

/// Collects the delivery reports of one `send` call and resumes its caller when the last one
/// arrives.
///
/// librdkafka hands each message's opaque pointer back with its delivery report; each points at
/// a ``Slot`` in this batch's slot array, so the report finds both the batch and the index
/// without an allocation per message. Partitions and offsets are kept as plain numbers and
/// turned into ``KafkaDeliveryReport``s once, when the caller resumes.
final class DeliveryBatch: Sendable {
    struct Slot {
        let batch: Unmanaged<DeliveryBatch>
        let index: Int
    }

    /// One message's outcome as librdkafka reports it.
    struct Outcome {
        let index: Int
        let partition: Int32
        let offset: Int64
        let error: rd_kafka_resp_err_t
    }

    private struct State {
        var remaining: Int
        var partitions: [Int32]
        var offsets: [Int64]
        var firstError: KafkaError?
        var continuation: CheckedContinuation<[KafkaDeliveryReport], any Error>?
        /// The batch's own reference while its caller has stopped waiting and reports are still
        /// due: librdkafka's reports point into ``slots``.
        var keptAlive: Unmanaged<DeliveryBatch>?
        var done: Bool { remaining == 0 }
    }

    nonisolated(unsafe) let slots: UnsafeMutablePointer<Slot>
    let count: Int
    /// Each message's topic, for its delivery report.
    let topics: [String]
    private let state: Mutex<State>

    init(topics: [String]) {
        let count = topics.count
        self.count = count
        self.topics = topics
        self.state = Mutex(
            State(
                remaining: count, partitions: Array(repeating: -1, count: count),
                offsets: Array(repeating: -1, count: count)))
        self.slots = UnsafeMutablePointer<Slot>.allocate(capacity: count)
        let unmanaged = Unmanaged.passUnretained(self)
        for index in 0..<count {
            (slots + index).initialize(to: Slot(batch: unmanaged, index: index))
        }
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    func opaque(for index: Int) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(slots + index)
    }

    /// Records a message that never reached librdkafka.
    func fail(index: Int, with error: KafkaError) {
        record(CollectionOfOne(Outcome(index: index, partition: -1, offset: -1, error: RD_KAFKA_RESP_ERR_NO_ERROR)), error: error)
    }

    /// Records several messages' outcomes under one lock.
    func complete(_ outcomes: some Collection<Outcome>) {
        record(outcomes, error: nil)
    }

    private func record(_ outcomes: some Collection<Outcome>, error: KafkaError?) {
        let continuation: CheckedContinuation<[KafkaDeliveryReport], any Error>?
        let outcome: Result<[KafkaDeliveryReport], KafkaError>?
        let keptAlive: Unmanaged<DeliveryBatch>?
        (continuation, outcome, keptAlive) = state.withLock { state in
            if let error { state.firstError = state.firstError ?? error }
            for outcome in outcomes {
                if outcome.error == RD_KAFKA_RESP_ERR_NO_ERROR {
                    state.partitions[outcome.index] = outcome.partition
                    state.offsets[outcome.index] = outcome.offset
                } else if state.firstError == nil {
                    state.firstError = deliveryError(outcome.error, topic: topics[outcome.index])
                }
            }
            state.remaining -= outcomes.count
            guard state.done else { return (nil, nil, nil) }
            defer {
                state.continuation = nil
                state.keptAlive = nil
            }
            return (state.continuation, result(of: state), state.keptAlive)
        }
        if let continuation, let outcome { continuation.resume(with: outcome) }
        // The caller that reported this outcome holds the batch too: releasing here is safe.
        keptAlive?.release()
    }

    /// Waits for every message's delivery report. A cancelled caller stops waiting at once
    /// (`CancellationError`); the batch then keeps itself alive until the last report.
    func wait() async throws -> [KafkaDeliveryReport] {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let outcome: Result<[KafkaDeliveryReport], any Error>? = state.withLock { state in
                    if state.done { return result(of: state).mapError { $0 } }
                    if Task.isCancelled {
                        state.keptAlive = Unmanaged.passRetained(self)
                        return .failure(CancellationError())
                    }
                    state.continuation = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let abandoned = state.withLock { state -> CheckedContinuation<[KafkaDeliveryReport], any Error>? in
                guard !state.done, let continuation = state.continuation else { return nil }
                state.continuation = nil
                state.keptAlive = Unmanaged.passRetained(self)
                return continuation
            }
            abandoned?.resume(throwing: CancellationError())
        }
    }

    private func result(of state: State) -> Result<[KafkaDeliveryReport], KafkaError> {
        if let error = state.firstError { return .failure(error) }
        return .success(
            (0..<count).map { index in
                let offset = state.offsets[index]
                return KafkaDeliveryReport(
                    topic: topics[index], partition: state.partitions[index], offset: offset >= 0 ? offset : nil)
            })
    }

    private func deliveryError(_ err: rd_kafka_resp_err_t, topic: String) -> KafkaError {
        let code = KafkaErrorCode(err)
        return KafkaError(
            code: .delivery, message: "delivery to '\(topic)' failed", underlying: code,
            isRetryable: code == .messageTimedOut)
    }
}
