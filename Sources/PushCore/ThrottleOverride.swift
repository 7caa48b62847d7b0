/// Per-job overrides of the app's throttling (the job's `throttle` field). Absent values keep
/// the app's configuration.
public struct ThrottleOverride: Hashable, Sendable {
    /// Fleet-wide sends per second for this job; greater than 0.
    public var ratePerSecond: Double?
    /// A worker pauses after every this many sends; at least 1.
    public var sleepAfter: Int?
    /// How long that pause lasts, in milliseconds; at least 0.
    public var sleepMilliseconds: Int?

    public init(ratePerSecond: Double? = nil, sleepAfter: Int? = nil, sleepMilliseconds: Int? = nil) {
        self.ratePerSecond = ratePerSecond
        self.sleepAfter = sleepAfter
        self.sleepMilliseconds = sleepMilliseconds
    }
}
