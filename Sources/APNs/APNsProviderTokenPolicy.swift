/// When provider tokens are regenerated. Apple rejects tokens older than an hour and answers
/// TooManyProviderTokenUpdates to tokens changed more often than every 20 minutes.
public struct APNsProviderTokenPolicy: Sendable, Hashable {
    /// A token is replaced once it is this old. Default 50 minutes.
    public var refreshAfter: Duration
    /// A token is never replaced before it is this old, not even after ExpiredProviderToken.
    /// Default 20 minutes.
    public var minimumLifetime: Duration

    public init(refreshAfter: Duration = .seconds(50 * 60), minimumLifetime: Duration = .seconds(20 * 60)) {
        self.refreshAfter = refreshAfter
        self.minimumLifetime = minimumLifetime
    }
}
