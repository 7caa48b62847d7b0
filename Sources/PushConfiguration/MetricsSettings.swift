/// Metrics endpoint settings (`metrics:`).
public struct MetricsSettings: Sendable, Equatable {
    /// Port on which `pushfleet worker` and `pushfleet feedback` serve `/healthz`, `/readyz` and
    /// `/metrics` (`port`), 0...65535; default none. (`pushfleet api` serves them on its own port.)
    public var port: Int?

    /// Creates metrics settings; `port` defaults to none.
    public init(port: Int? = nil) {
        self.port = port
    }
}
