import DequeModule
import Synchronization

/// A counting semaphore for async callers: `acquire` suspends while too few permits are free.
///
/// The Kafka producer's in-flight window (a fast producer waits for confirmations instead of
/// growing a queue without bound) and the send stage's notifications in flight. Waiters are served in arrival order; a waiter asking for
/// several permits takes them as they free up.
public final class AsyncPermits: Sendable {
    private struct Waiter {
        let id: Int
        let count: Int
        var missing: Int
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var available: Int
        var waiters: Deque<Waiter> = []
        var nextID = 0

        /// Hands `count` permits to the waiters in arrival order, the rest back to the free
        /// ones; answers the waiters now complete.
        mutating func give(_ count: Int) -> [CheckedContinuation<Void, any Error>] {
            var completed: [CheckedContinuation<Void, any Error>] = []
            var free = count
            while free > 0, var first = waiters.first {
                let given = min(free, first.missing)
                first.missing -= given
                free -= given
                if first.missing == 0 {
                    completed.append(first.continuation)
                    waiters.removeFirst()
                } else {
                    waiters[waiters.startIndex] = first
                }
            }
            available += free
            return completed
        }
    }

    private let state: Mutex<State>
    public let capacity: Int

    public init(_ count: Int) {
        precondition(count > 0, "AsyncPermits needs at least one permit")
        self.capacity = count
        self.state = Mutex(State(available: count))
    }

    /// Callers suspended in ``acquire(_:)``.
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// Permits taken and not yet released (those promised to a waiter count as taken).
    public var inUse: Int { state.withLock { capacity - $0.available } }

    /// Takes `count` permits (at most ``capacity``), suspending until all are granted.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled while it waits; the
    ///   permits it had been promised so far go to the next waiters, and it holds none.
    public func acquire(_ count: Int = 1) async throws {
        precondition(count > 0 && count <= capacity, "acquire between 1 and \(capacity) permits")
        let id = state.withLock { state -> Int? in
            guard state.waiters.isEmpty, state.available >= count else {
                defer { state.nextID += 1 }
                return state.nextID
            }
            state.available -= count
            return nil
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Now { case granted, cancelled, waiting }
                let now = state.withLock { state -> Now in
                    if Task.isCancelled { return .cancelled }
                    if state.waiters.isEmpty, state.available >= count {
                        state.available -= count
                        return .granted
                    }
                    let taken = state.waiters.isEmpty ? state.available : 0
                    state.available -= taken
                    state.waiters.append(Waiter(id: id, count: count, missing: count - taken, continuation: continuation))
                    return .waiting
                }
                switch now {
                case .granted: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .waiting: break
                }
            }
        } onCancel: {
            let (cancelled, completed) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, [CheckedContinuation<Void, any Error>]) in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return (nil, []) }
                let waiter = state.waiters.remove(at: index)
                return (waiter.continuation, state.give(waiter.count - waiter.missing))
            }
            cancelled?.resume(throwing: CancellationError())
            for continuation in completed { continuation.resume() }
        }
    }

    /// Returns permits, completing waiters in arrival order.
    public func release(_ count: Int = 1) {
        let completed = state.withLock { $0.give(count) }
        for continuation in completed { continuation.resume() }
    }
}
