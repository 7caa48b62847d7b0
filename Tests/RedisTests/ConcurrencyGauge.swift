import Synchronization

/// Counts how many callers are inside a section at once, and the most there ever were.
final class ConcurrencyGauge: Sendable {
    private let state = Mutex((current: 0, peak: 0))

    /// The highest number of callers that were inside at the same time.
    var peak: Int {
        state.withLock { $0.peak }
    }

    func enter() {
        state.withLock { state in
            state.current += 1
            state.peak = max(state.peak, state.current)
        }
    }

    func leave() {
        state.withLock { $0.current -= 1 }
    }
}
