/// The HTTP API's settings (`api:`), for `pushfleet api`.
public struct APISettings: Sendable, Equatable {
    /// Address to listen on (`host`); default `0.0.0.0`.
    public var host: String
    /// Port to listen on (`port`), 0...65535 (0: any free port); default 8080.
    public var port: Int
    /// Largest request body accepted (`max-body-bytes`), ≥ 1024; default 2 MiB (a job of 10,000
    /// tokens is about 700 KB).
    public var maxBodyBytes: Int

    /// Creates API settings with the documented defaults.
    public init(host: String = "0.0.0.0", port: Int = 8080, maxBodyBytes: Int = 2 * 1024 * 1024) {
        self.host = host
        self.port = port
        self.maxBodyBytes = maxBodyBytes
    }
}
