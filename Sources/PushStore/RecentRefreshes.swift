import Synchronization

/// The keys this process wrote with their TTL lately, so that a write path that must keep a
/// key alive refreshes it once per ``interval`` instead of with every write: a quarter of the
/// keys' time to live, at most 10 minutes, so a key lives at least three quarters of its TTL
/// past its last write. It forgets everything past ``limit`` keys and starts over (a key
/// forgotten is only refreshed once more).
final class RecentRefreshes: Sendable {
    let interval: Duration
    /// The most keys remembered.
    static let limit = 100_000
    private let refreshed = Mutex([String: ContinuousClock.Instant]())

    /// For keys whose time to live is `timeToLive`.
    init(timeToLive: Duration) {
        interval = min(.seconds(600), timeToLive / 4)
    }

    /// Those of `keys` this process did not refresh within the last ``interval`` before `now`.
    func due(_ keys: [String], at now: ContinuousClock.Instant) -> Set<String> {
        refreshed.withLock { known in
            Set(keys.filter { known[$0].map { now - $0 > interval } ?? true })
        }
    }

    /// `keys` were refreshed at `now`.
    func record(_ keys: some Sequence<String>, at now: ContinuousClock.Instant) {
        refreshed.withLock { known in
            if known.count > Self.limit { known.removeAll() }
            for key in keys { known[key] = now }
        }
    }
}
