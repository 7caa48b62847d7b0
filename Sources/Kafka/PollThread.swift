import Foundation
import Synchronization

/// A dedicated OS thread that runs librdkafka's blocking poll loop, so that no blocking call ever
/// occupies a thread of Swift's cooperative pool.
final class PollThread: Sendable {
    private let stopRequested = Atomic<Bool>(false)
    private let finished = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Starts `iteration` in a loop until ``requestStop()``; then runs `finish` once.
    init(name: String, iteration: @escaping @Sendable () -> Void, finish: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            while !self.stopRequested.load(ordering: .acquiring) {
                iteration()
            }
            finish()
            let waiters = self.finished.withLock { state in
                state.done = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        thread.name = name
        thread.start()
    }

    var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }

    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
    }

    /// Returns once the loop and its `finish` have run.
    func join() async {
        await withCheckedContinuation { continuation in
            let done = finished.withLock { state in
                if state.done { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
