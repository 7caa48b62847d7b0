import CRdKafka
import Synchronization

/// Collects the delivery reports of one `send` call and resumes its caller when the last one
/// arrives.
///
/// librdkafka hands each message's opaque pointer back in the delivery callback; each points at
/// a ``Slot`` in this batch's slot array, so the callback finds both the batch and the index
/// without an allocation per message.
final class DeliveryBatch: Sendable {
    struct Slot {
        let batch: Unmanaged<DeliveryBatch>
        let index: Int
    }

    private struct State {
        var remaining: Int
        var reports: [KafkaDeliveryReport?]
        var firstError: KafkaError?
        var continuation: CheckedContinuation<[KafkaDeliveryReport], any Error>?
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
        self.state = Mutex(State(remaining: count, reports: Array(repeating: nil, count: count)))
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

    func complete(index: Int, with result: Result<KafkaDeliveryReport, KafkaError>) {
        complete(CollectionOfOne((index: index, result: result)))
    }

    /// Records several messages' outcomes under one lock.
    func complete(_ results: some Collection<(index: Int, result: Result<KafkaDeliveryReport, KafkaError>)>) {
        let continuation: CheckedContinuation<[KafkaDeliveryReport], any Error>?
        let outcome: Result<[KafkaDeliveryReport], KafkaError>?
        (continuation, outcome) = state.withLock { state in
            for (index, result) in results {
                switch result {
                case .success(let report): state.reports[index] = report
                case .failure(let error): state.firstError = state.firstError ?? error
                }
            }
            state.remaining -= results.count
            guard state.done else { return (nil, nil) }
            let outcome = Self.outcome(of: state)
            defer { state.continuation = nil }
            return (state.continuation, outcome)
        }
        if let continuation, let outcome { continuation.resume(with: outcome) }
    }

    /// Waits for every message's delivery report.
    func wait() async throws -> [KafkaDeliveryReport] {
        try await withCheckedThrowingContinuation { continuation in
            let outcome: Result<[KafkaDeliveryReport], KafkaError>? = state.withLock { state in
                guard state.done else {
                    state.continuation = continuation
                    return nil
                }
                return Self.outcome(of: state)
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    private static func outcome(of state: State) -> Result<[KafkaDeliveryReport], KafkaError> {
        if let error = state.firstError { return .failure(error) }
        return .success(state.reports.map { $0! })
    }
}
