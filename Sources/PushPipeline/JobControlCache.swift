import PushStore
import Synchronization

/// Each job's control state (``JobControl``) as this worker last read it from Redis: asked again
/// at most once a second per job by ``current(_:)``. A cancelled job stays cancelled. Decisions
/// that send or drop work read the state afresh (``fresh(_:)``): the sender before each admission,
/// so nothing admitted after a pause is sent, and a chunk is left for a resume only when the
/// job is paused now, so a job resumed a moment ago is never mistaken for a paused one.
final class JobControlCache: Sendable {
    private struct Entry {
        var control: JobControl
        var checkedAt: ContinuousClock.Instant
    }

    private let store: JobStore
    private let entries = Mutex<[String: Entry]>([:])
    private static let refreshInterval: Duration = .seconds(1)
    /// Jobs remembered before the cache starts over (a worker sees few jobs at a time).
    private static let capacity = 4_096

    init(store: JobStore) {
        self.store = store
    }

    /// The job's control state, at most a second old.
    func current(_ jobID: String) async throws -> JobControl {
        let now = ContinuousClock.now
        if let entry = entries.withLock({ $0[jobID] }),
            entry.control.state == .cancelled || now - entry.checkedAt < Self.refreshInterval
        {
            return entry.control
        }
        return try await fresh(jobID)
    }

    /// The job's control state read now.
    func fresh(_ jobID: String) async throws -> JobControl {
        let now = ContinuousClock.now
        let control = try await store.control(jobID: jobID)
        remember(jobID, control, at: now)
        return control
    }

    /// What the cache knows of the job, however old; no I/O.
    func cached(_ jobID: String) -> JobControl? {
        entries.withLock { $0[jobID]?.control }
    }

    /// The job's state, at most a second old, but read afresh when that says paused: work is
    /// put aside for a resume only when the job is paused now.
    func state(_ jobID: String) async throws -> JobControl.State {
        let state = try await current(jobID).state
        guard state == .paused else { return state }
        return try await fresh(jobID).state
    }

    /// Forgets what the cache knows of the job, so that the next ``current(_:)`` reads it.
    func invalidate(_ jobID: String) {
        _ = entries.withLock { $0.removeValue(forKey: jobID) }
    }

    /// Records a state this worker wrote or learned.
    func remember(_ jobID: String, _ control: JobControl, at now: ContinuousClock.Instant = .now) {
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[jobID] = Entry(control: control, checkedAt: now)
        }
    }
}

/// Why a stage stops working on a job: it was cancelled (what the stage has not done is counted
/// as cancelled), or it is paused (what the stage has not done is done again when the job
/// resumes: the job is published again).
enum JobStop: Equatable, Sendable {
    case cancelled(jobID: String)
    case paused(jobID: String)
}
