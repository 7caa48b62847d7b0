/// An explicit APNs host to connect to instead of Apple's (`apns.endpoint:`), e.g. a simulator.
public struct APNsEndpoint: Sendable, Equatable {
    /// Host name or address (`host`); required.
    public var host: String
    /// TCP port (`port`), 1...65535; default 443.
    public var port: Int

    /// Creates an endpoint; `port` defaults to 443.
    public init(host: String, port: Int = 443) {
        self.host = host
        self.port = port
    }
}
