/// The campaign circuit breaker (`breaker:`): how a job's early answers are judged before its
/// registry changes are applied, and when they pause it. A job is watched until this many of
/// its notifications have a final outcome (or it finishes); while watched, more than
/// ``maxRejectedShare`` of token rejections (`BadDeviceToken`, `DeviceTokenNotForTopic`) and
/// undocumented refusals, once at least ``minNotifications`` are in, pause it fleet-wide. Answers
/// that are wrong for the whole request (`BadTopic`, `TopicDisallowed`, …) pause a job at once,
/// watched or not.
public struct BreakerSettings: Sendable, Equatable {
    /// Notifications with a final outcome after which a job is no longer watched
    /// (`watch-notifications`), ≥ 1; default 2,000.
    public var watchNotifications: Int
    /// Notifications with a final outcome needed before the share is judged
    /// (`min-notifications`), 1...watch-notifications; default 200.
    public var minNotifications: Int
    /// The largest share of rejected tokens a watched job may show (`max-rejected-share`),
    /// 0...1; default 0.1.
    public var maxRejectedShare: Double

    /// Creates breaker settings; every parameter has the documented default.
    public init(watchNotifications: Int = 2_000, minNotifications: Int = 200, maxRejectedShare: Double = 0.1) {
        self.watchNotifications = watchNotifications
        self.minNotifications = minNotifications
        self.maxRejectedShare = maxRejectedShare
    }
}
