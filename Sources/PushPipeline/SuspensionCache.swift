import PushStore
import Synchronization

/// Whether an app's sending is suspended fleet-wide (its credential was refused), as this
/// worker last heard from Redis; refreshed at most once a second per app.
final class SuspensionCache: Sendable {
    private struct Entry {
        var reason: String?
        var checkedAt: ContinuousClock.Instant
    }

    /// How long a suspension lasts before workers try the credential again.
    static let duration: Duration = .seconds(60)
    private static let refreshInterval: Duration = .seconds(1)

    let store: AppSuspension
    private let entries = Mutex<[String: Entry]>([:])

    init(store: AppSuspension) {
        self.store = store
    }

    /// The suspension's reason, or `nil` when the app may send.
    func reason(app: String) async throws -> String? {
        let now = ContinuousClock.now
        if let entry = entries.withLock({ $0[app] }), now - entry.checkedAt < Self.refreshInterval {
            return entry.reason
        }
        let reason = try await store.reason(app: app)
        entries.withLock { $0[app] = Entry(reason: reason, checkedAt: now) }
        return reason
    }

    /// Suspends the app fleet-wide and at once in this worker (each call extends the
    /// suspension); `true` when this worker did not already hold the app suspended, so that
    /// the refusal is reported once, not once per batch of notifications in flight.
    @discardableResult
    func suspend(app: String, reason: String) async throws -> Bool {
        let previous = entries.withLock { entries in
            defer { entries[app] = Entry(reason: reason, checkedAt: .now) }
            return entries[app]?.reason
        }
        try await store.suspend(app: app, for: Self.duration, reason: reason)
        return previous == nil
    }
}
