/// Metrics endpoint settings (`metrics:`).
public struct MetricsSettings: Sendable, Equatable {
    /// Port to serve metrics on (`port`), 0...65535; default none (no metrics endpoint).
    public var port: Int?

    /// Creates metrics settings; `port` defaults to none.
    public init(port: Int? = nil) {
        self.port = port
    }
}
