import Foundation
import Synchronization

/// A dedicated OS thread that runs librdkafka's blocking poll loop, so that no blocking call ever
/// occupies a thread of Swift's cooperative pool.
final class PollThread: Sendable {
    private let stopRequested = Atomic<Bool>(false)
    /// Entered while the thread runs.
    private let exited = DispatchGroup()
    private let finished = Mutex<(done: Bool, waiters: [UUID: CheckedContinuation<Void, Never>])>((false, [:]))

    /// Starts `iteration` in a loop until ``requestStop()``; then runs `finish` once.
    init(name: String, iteration: @escaping @Sendable () -> Void, finish: @escaping @Sendable () -> Void) {
        exited.enter()
        let thread = Thread { [self] in
            while !self.stopRequested.load(ordering: .acquiring) {
                iteration()
            }
            finish()
            let waiters = self.finished.withLock { state in
                state.done = true
                defer { state.waiters = [:] }
                return state.waiters
            }
            for waiter in waiters.values { waiter.resume() }
            exited.leave()
        }
        thread.name = name
        thread.start()
    }

    var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }

    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
    }

    /// Blocks the calling thread (never a thread of Swift's cooperative pool) until the loop
    /// and its `finish` have run.
    func joinBlocking() {
        exited.wait()
    }

    /// Returns once the loop and its `finish` have run, or as soon as the calling task is
    /// cancelled (the thread goes on until its iteration in progress ends: one that is inside a
    /// blocking librdkafka call, such as a commit to a broker that does not answer, keeps the
    /// owner alive until it returns).
    func join() async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = finished.withLock { state in
                    if state.done || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            finished.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
