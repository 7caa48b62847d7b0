import PushStore
import Synchronization

/// Whether a job was cancelled, as this worker last heard from Redis: a job not cancelled is
/// asked again at most once a second; a cancelled one stays cancelled.
final class CancellationCache: Sendable {
    private let store: JobStore
    private let entries = Mutex<[String: ContinuousClock.Instant?]>([:])
    private static let refreshInterval: Duration = .seconds(1)
    /// Jobs remembered before the cache starts over (a worker sees few jobs at a time).
    private static let capacity = 4_096

    init(store: JobStore) {
        self.store = store
    }

    /// Whether the job was cancelled.
    func isCancelled(_ jobID: String) async throws -> Bool {
        let now = ContinuousClock.now
        if let entry = entries.withLock({ $0[jobID] }) {
            guard let checkedAt = entry else { return true }
            if now - checkedAt < Self.refreshInterval { return false }
        }
        let cancelled = try await store.isCancelled(jobID: jobID)
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[jobID] = cancelled ? .some(nil) : .some(now)
        }
        return cancelled
    }
}

/// Thrown inside a stage to stop working on a job that was cancelled.
struct JobCancelled: Error {
    let jobID: String
}
