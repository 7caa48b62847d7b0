import Synchronization

/// The outcomes of a chunk's notifications, from the APNs client's callbacks (any thread) to
/// the task that settles them a batch at a time (``NotificationSender``).
///
/// ``add(_:_:)`` never waits; ``next(upTo:)`` waits until `upTo` outcomes are in, or every
/// outcome still to come (the total is set with ``expect(_:)`` once the last notification was
/// handed to the client), and answers `nil` when all were taken.
final class SendResultQueue: Sendable {
    typealias Item = (index: Int, result: SendResult)

    private struct State {
        var items: [Item] = []
        var expected: Int?
        var taken = 0
        var waiter: (wanted: Int, continuation: CheckedContinuation<[Item]?, Never>)?

        /// The items a waiter wanting `wanted` gets now, `nil` (the end) when all were taken,
        /// or no answer yet.
        mutating func serve(_ wanted: Int) -> [Item]?? {
            if let expected, taken >= expected { return .some(nil) }
            let remaining = expected.map { $0 - taken }
            guard items.count >= wanted || (remaining != nil && items.count >= remaining!) else { return nil }
            let count = min(wanted, items.count)
            let served = Array(items.prefix(count))
            items.removeFirst(count)
            taken += count
            return .some(served)
        }
    }

    private let state = Mutex(State())

    /// An outcome arrived.
    func add(_ index: Int, _ result: SendResult) {
        let resume = state.withLock { state -> (CheckedContinuation<[Item]?, Never>, [Item]?)? in
            state.items.append((index, result))
            guard let waiter = state.waiter, let served = state.serve(waiter.wanted) else { return nil }
            state.waiter = nil
            return (waiter.continuation, served)
        }
        if let (continuation, items) = resume { continuation.resume(returning: items) }
    }

    /// No more notifications will be handed over: `total` outcomes come in all.
    func expect(_ total: Int) {
        let resume = state.withLock { state -> (CheckedContinuation<[Item]?, Never>, [Item]?)? in
            state.expected = total
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
