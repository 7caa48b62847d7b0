import Synchronization

/// The outcomes of a chunk's notifications, from the APNs client's callbacks (any thread) to
/// the task that settles them a batch at a time (``NotificationSender``).
///
/// ``add(_:_:)`` never waits; ``next(upTo:)`` waits until `upTo` outcomes are in, or every
/// outcome still to come (the total is set with ``expect(_:)`` once the last notification was
/// handed to the client), or, after ``allowPartial()``, any outcome; it answers `nil` when all
/// were taken. ``next(upTo:orAfter:)`` allows a partial batch once it has waited that long, so
/// what arrived is settled (and its slots of the in-flight window returned) even while the
/// rest of a batch cannot be sent.
final class SendResultQueue: Sendable {
    typealias Item = (index: Int, result: SendResult)

    private struct State {
        var items: [Item] = []
        var expected: Int?
        var taken = 0
        /// The next serving may be smaller than asked for (at least one outcome).
        var partial = false
        var waiter: (wanted: Int, continuation: CheckedContinuation<[Item]?, Never>)?

        /// The items a waiter wanting `wanted` gets now, `nil` (the end) when all were taken,
        /// or no answer yet.
        mutating func serve(_ wanted: Int) -> [Item]?? {
            if let expected, taken >= expected { return .some(nil) }
            let remaining = expected.map { $0 - taken }
            let full = items.count >= wanted || (remaining != nil && items.count >= remaining!)
            guard full || (partial && !items.isEmpty) else { return nil }
            let count = min(wanted, items.count)
            let served = Array(items.prefix(count))
            items.removeFirst(count)
            taken += count
            partial = false
            return .some(served)
        }
    }

    private let state = Mutex(State())

    /// An outcome arrived.
    func add(_ index: Int, _ result: SendResult) {
        changeServingWaiter { $0.items.append((index, result)) }
    }

    /// The next serving need not be a full batch: a waiting taker gets what is in now, or the
    /// first outcome that arrives.
    func allowPartial() {
        changeServingWaiter { $0.partial = true }
    }

    /// ``next(upTo:)``, allowing a partial batch once `patience` has passed.
    func next(upTo wanted: Int, orAfter patience: Duration) async -> [Item]? {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await Task.sleep(for: patience)
                } catch {
                    return
                }
                self.allowPartial()
            }
            defer { group.cancelAll() }
            return await next(upTo: wanted)
        }
    }

    /// No more notifications will be handed over: `total` outcomes come in all.
    func expect(_ total: Int) {
        changeServingWaiter { $0.expected = total }
    }

    /// Applies `change`, then serves the waiting taker if it can be served now.
    private func changeServingWaiter(_ change: (inout State) -> Void) {
        let resume = state.withLock { state -> (CheckedContinuation<[Item]?, Never>, [Item]?)? in
            change(&state)
            guard let waiter = state.waiter, let served = state.serve(waiter.wanted) else { return nil }
            state.waiter = nil
            return (waiter.continuation, served)
        }
        if let (continuation, items) = resume { continuation.resume(returning: items) }
    }

    /// The next `wanted` outcomes in arrival order (fewer at the end), or `nil` once every
    /// expected outcome was taken. One caller at a time.
    func next(upTo wanted: Int) async -> [Item]? {
        precondition(wanted > 0)
        return await withCheckedContinuation { continuation in
            let now = state.withLock { state -> [Item]?? in
                if let served = state.serve(wanted) { return served }
                precondition(state.waiter == nil, "one caller of next(upTo:) at a time")
                state.waiter = (wanted, continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }
}
