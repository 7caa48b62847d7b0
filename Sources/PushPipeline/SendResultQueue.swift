import Synchronization

/// The outcomes of a chunk's notifications, from the APNs client's callbacks (any thread) to
/// the task that settles them a batch at a time (``NotificationSender``).
///
/// ``add(_:_:)`` never waits; ``next(upTo:)`` waits until `upTo` outcomes are in, or every
/// outcome of the notifications handed to the client so far (``handOver(_:)``: a batch waits
/// only for answers that are coming, so what a throttle or the in-flight window holds back never
/// holds up the settling of what was answered), or, after ``allowPartial()``, any outcome; it
/// answers `nil` when all were taken (the total is set with ``expect(_:)`` once the last
/// notification was handed over). ``next(upTo:orAfter:)`` allows a partial batch once it has
/// waited that long, so what arrived is settled (and its slots of the in-flight window
/// returned) while the rest of a batch is still at APNs.
final class SendResultQueue: Sendable {
    typealias Item = (index: Int, result: SendResult)

    private struct State {
        var items: [Item] = []
        var expected: Int?
        /// Notifications handed to the client so far: their outcomes are all that can arrive.
        var handedOver = 0
        var taken = 0
        /// The next serving may be smaller than asked for (at least one outcome).
        var partial = false
        var waiter: (wanted: Int, continuation: CheckedContinuation<[Item]?, Never>)?

        /// The items a waiter wanting `wanted` gets now, `nil` (the end) when all were taken,
        /// or no answer yet.
        mutating func serve(_ wanted: Int) -> [Item]?? {
            if let expected, taken >= expected { return .some(nil) }
            let coming = handedOver - taken - items.count
            guard !items.isEmpty, items.count >= wanted || coming <= 0 || partial else { return nil }
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

    /// `count` more notifications go to the client: their outcomes are coming. Called before
    /// the client has them, so an answer never arrives for a notification not counted here.
    func handOver(_ count: Int) {
        changeServingWaiter { $0.handedOver += count }
    }

    /// No more notifications will be handed over: `total` outcomes come in all.
    func expect(_ total: Int) {
        changeServingWaiter {
            $0.expected = total
            $0.handedOver = max($0.handedOver, total)
        }
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
