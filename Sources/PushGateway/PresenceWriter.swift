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
///
/// A change may carry what to do once it is written (or given up): a connecting device's inbox
/// is read only after its claim is in Redis, so that a send stage that kept a message in the
/// inbox before reading the presence either finds the new connection or leaves the message in
/// the inbox for the replay to find.
final class PresenceWriter: Sendable {
    static let interval = Duration.milliseconds(20)
    static let maxPending = 100_000

    private struct Pending {
        var change: PresenceChange
        var then: (@Sendable () -> Void)?
    }

    private let store: PresenceStore
    private let lease: Duration
    private let logger: Logger
    private let pending = Mutex<[Pending]>([])

    init(store: PresenceStore, lease: Duration, logger: Logger) {
        self.store = store
        self.lease = lease
        self.logger = logger
    }

    /// Writes `change` with the next batch, then runs `then`.
    func enqueue(_ change: PresenceChange, then: (@Sendable () -> Void)? = nil) {
        pending.withLock { $0.append(Pending(change: change, then: then)) }
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
            try await store.apply(batch.map(\.change), lease: lease)
            GatewayMetrics.presenceWrites.increment(by: batch.count)
            for item in batch { item.then?() }
        } catch {
            GatewayMetrics.presenceFailures.increment(by: batch.count)
            logger.warning(
                "presence not written; kept for the next round", metadata: ["changes": "\(batch.count)", "error": "\(error)"])
            let dropped = pending.withLock { pending -> [Pending] in
                pending.insert(contentsOf: batch, at: 0)
                let over = max(0, pending.count - Self.maxPending)
                defer { pending.removeFirst(over) }
                return Array(pending.prefix(over))
            }
            for item in dropped { item.then?() }
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
