import DequeModule
import Synchronization

/// A counting semaphore for async callers: `acquire` suspends while too few permits are free.
///
/// The Kafka producer's in-flight window (a fast producer waits for confirmations instead of
/// growing a queue without bound) and the send stage's notifications in flight. Waiters are served in arrival order; a waiter asking for
/// several permits takes them as they free up.
public final class AsyncPermits: Sendable {
    private struct Waiter {
        var missing: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var available: Int
        var waiters: Deque<Waiter> = []
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

    /// Takes `count` permits (at most ``capacity``), suspending until all are granted.
    public func acquire(_ count: Int = 1) async {
        precondition(count > 0 && count <= capacity, "acquire between 1 and \(capacity) permits")
        let granted = state.withLock { state in
            guard state.waiters.isEmpty, state.available >= count else { return false }
            state.available -= count
            return true
        }
        if granted { return }
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.waiters.isEmpty, state.available >= count {
                    state.available -= count
                    return true
                }
                let taken = state.waiters.isEmpty ? state.available : 0
                state.available -= taken
                state.waiters.append(Waiter(missing: count - taken, continuation: continuation))
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Returns permits, completing waiters in arrival order.
    public func release(_ count: Int = 1) {
        var completed: [CheckedContinuation<Void, Never>] = []
        state.withLock { state in
            var free = count
            while free > 0, var first = state.waiters.first {
                let given = min(free, first.missing)
                first.missing -= given
                free -= given
                if first.missing == 0 {
                    completed.append(first.continuation)
                    state.waiters.removeFirst()
                } else {
                    state.waiters[state.waiters.startIndex] = first
                }
            }
            state.available += free
        }
        for continuation in completed { continuation.resume() }
    }
}
