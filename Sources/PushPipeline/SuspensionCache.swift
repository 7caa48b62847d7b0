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

    /// Holds the app suspended in this worker at once; `true` when it was not already held, so
    /// that a refusal is reported once, not once per batch of notifications in flight. Kept
    /// apart from ``suspendFleetWide(app:reason:)``, which is retried: a retry must not turn
    /// the first refusal into a repeated one.
    func hold(app: String, reason: String) -> Bool {
        entries.withLock { entries in
            defer { entries[app] = Entry(reason: reason, checkedAt: .now) }
            return entries[app]?.reason == nil
        }
    }

    /// Suspends the app fleet-wide for ``duration`` from now (each call extends it).
    func suspendFleetWide(app: String, reason: String) async throws {
        try await store.suspend(app: app, for: Self.duration, reason: reason)
    }
}
