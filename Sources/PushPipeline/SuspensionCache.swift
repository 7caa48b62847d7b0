import APNsCore
import PushConfiguration
import PushStore
import Synchronization

/// Whether an app's sending to an environment is suspended fleet-wide (the credential it sends
/// there with was refused), as this worker last heard from Redis; refreshed at most once a
/// second per app and environment.
final class SuspensionCache: Sendable {
    private struct Entry {
        var reason: String?
        var checkedAt: ContinuousClock.Instant
    }

    /// How long a suspension lasts before workers try the credential again
    /// (`apns.credential-suspension-seconds`).
    let duration: Duration
    private static let refreshInterval: Duration = .seconds(1)

    let store: AppSuspension
    private let entries = Mutex<[String: Entry]>([:])

    init(store: AppSuspension, duration: Duration = APNsSettings.defaultCredentialSuspension) {
        self.store = store
        self.duration = duration
    }

    /// The suspension's reason, or `nil` when the app may send to `environment`.
    func reason(app: String, environment: APNsEnvironment) async throws -> String? {
        let now = ContinuousClock.now
        let key = Self.key(app, environment)
        if let entry = entries.withLock({ $0[key] }), now - entry.checkedAt < Self.refreshInterval {
            return entry.reason
        }
        let reason = try await store.reason(app: app, environment: environment)
        entries.withLock { $0[key] = Entry(reason: reason, checkedAt: now) }
        return reason
    }

    /// Holds the app's sending to `environment` suspended in this worker at once; `true` when it was not already held, so
    /// that a refusal is reported once, not once per batch of notifications in flight. Kept
    /// apart from ``suspendFleetWide(app:environment:reason:)``, which is retried: a retry must not turn
    /// the first refusal into a repeated one.
    func hold(app: String, environment: APNsEnvironment, reason: String) -> Bool {
        let key = Self.key(app, environment)
        return entries.withLock { entries in
            defer { entries[key] = Entry(reason: reason, checkedAt: .now) }
            return entries[key]?.reason == nil
        }
    }

    /// Suspends the app's sending to `environment` fleet-wide for ``duration`` from now (each
    /// call extends it).
    func suspendFleetWide(app: String, environment: APNsEnvironment, reason: String) async throws {
        try await store.suspend(app: app, environment: environment, for: duration, reason: reason)
    }

    private static func key(_ app: String, _ environment: APNsEnvironment) -> String {
        app + "\u{0}" + environment.rawValue
    }
}
