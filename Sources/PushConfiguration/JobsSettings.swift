/// What operators may do to published jobs (`jobs:`).
public struct JobsSettings: Sendable, Equatable {
    /// How long after its publication a campaign can be recalled or overwritten
    /// (`recall-window-hours`), 1...168 (a job's keys, its sent state among them, live 7 days);
    /// default 24 hours.
    public var recallWindow: Duration

    /// Creates jobs settings; the default recall window is 24 hours.
    public init(recallWindow: Duration = .seconds(24 * 3600)) {
        self.recallWindow = recallWindow
    }
}
