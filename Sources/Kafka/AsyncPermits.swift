import DequeModule
import Synchronization

/// A counting semaphore for async callers: `acquire` suspends while no permit is free.
///
/// Used as the producer's in-flight window, so a fast producer waits for confirmations instead
/// of growing a queue without bound.
final class AsyncPermits: Sendable {
    private struct State {
        var available: Int
        var waiters: Deque<CheckedContinuation<Void, Never>> = []
    }

    private let state: Mutex<State>

    init(_ count: Int) {
        precondition(count > 0, "AsyncPermits needs at least one permit")
        self.state = Mutex(State(available: count))
    }

    func acquire() async {
        let acquired = state.withLock { state in
            guard state.available > 0 else { return false }
            state.available -= 1
            return true
        }
        if acquired { return }
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.available > 0 {
                    state.available -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func release(_ count: Int = 1) {
        var woken: [CheckedContinuation<Void, Never>] = []
        state.withLock { state in
            var remaining = count
            while remaining > 0, let waiter = state.waiters.popFirst() {
                woken.append(waiter)
                remaining -= 1
            }
            state.available += remaining
        }
        for waiter in woken { waiter.resume() }
    }
}
