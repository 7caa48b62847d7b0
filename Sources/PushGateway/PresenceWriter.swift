import CoreMetrics
import Logging
import PushStore
import Synchronization

/// Presence changes of a gateway's connections, written to Redis in batches: every 20 ms, all
/// that came meanwhile in one pipeline (one script per app and presence bucket). A reconnect
/// storm of thousands of devices per second is then a few hundred round trips, not thousands.
///
/// A batch that fails (Redis unreachable) is kept for the next round, up to 100,000 changes;
/// past that the oldest go. What is lost only makes devices look offline (their deliveries take
/// APNs) until their next heartbeat, or look online until their lease ends.
final class PresenceWriter: Sendable {
    static let interval = Duration.milliseconds(20)
    static let maxPending = 100_000

    private let store: PresenceStore
    private let lease: Duration
    private let logger: Logger
    private let pending = Mutex<[PresenceChange]>([])

    init(store: PresenceStore, lease: Duration, logger: Logger) {
        self.store = store
        self.lease = lease
        self.logger = logger
    }

    func enqueue(_ change: PresenceChange) {
        pending.withLock { $0.append(change) }
    }

    /// Writes what is pending.
    func flush() async {
        let batch = pending.withLock { pending in
            let batch = pending
            pending.removeAll(keepingCapacity: true)
            return batch
        }
        guard !batch.isEmpty else { return }
        do {
            try await store.apply(batch, lease: lease)
            GatewayMetrics.presenceWrites.increment(by: batch.count)
        } catch {
            GatewayMetrics.presenceFailures.increment(by: batch.count)
            logger.warning(
                "presence not written; kept for the next round", metadata: ["changes": "\(batch.count)", "error": "\(error)"])
            pending.withLock { pending in
                pending.insert(contentsOf: batch, at: 0)
                if pending.count > Self.maxPending { pending.removeFirst(pending.count - Self.maxPending) }
            }
        }
    }

    /// Flushes every 20 ms until the task is cancelled, then once more.
    func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.interval)
            await flush()
        }
        await flush()
    }
}
