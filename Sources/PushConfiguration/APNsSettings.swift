public import APNsCore

/// APNs connection settings shared by every app (`apns:`).
public struct APNsSettings: Sendable, Equatable {
    /// Overrides Apple's hosts for every environment (`endpoint`); default none (use Apple's).
    public var endpoint: APNsEndpoint?
    /// Overrides the host of one environment (`endpoints.sandbox`, `endpoints.production`),
    /// before ``endpoint``; default none.
    public var endpoints: [APNsEnvironment: APNsEndpoint]
    /// Absolute path of a PEM file of trust roots used instead of the system's (`ca-file`); default none.
    public var caFile: String?
    /// Apple's port (`port`), 443 or 2197; default 443. Ignored when ``endpoint`` is set.
    public var port: Int
    /// The most HTTP/2 connections a (credential, environment) pool opens
    /// (`connections-per-pool`), ≥ 1; default 128. Each pool sizes itself to its demand and to
    /// the distance to APNs between ``minConnectionsPerPool`` and this (the APNs client's
    /// `APNsPoolSizing`; docs/configuration.md); set both to the same value for a fixed pool.
    public var connectionsPerPool: Int
    /// The connections a pool keeps open even when idle (`min-connections-per-pool`), ≥ 1;
    /// default 1.
    public var minConnectionsPerPool: Int
    /// Streams one connection carries at once at most (`streams-per-connection`), 1...1000; the
    /// server's SETTINGS_MAX_CONCURRENT_STREAMS caps it further, and so does its connection
    /// window (Apple's 65,535 bytes hold about 250 requests of 256 bytes). Default 1000: at a
    /// distance every connection costs CPU per read and write, and fewer fuller connections
    /// send more per CPU-second (benchmarks/results/capacity-wan.md); on loopback 100 or 1,000
    /// measured the same.
    public var streamsPerConnection: Int
    /// Time allowed for one APNs request (`request-timeout-ms`), ≥ 1 ms; default 10 seconds.
    public var requestTimeout: Duration
    /// Threads that run a worker's APNs connections (`event-loops`), ≥ 1; default `nil`: half
    /// the machine's cores, at least one (``effectiveEventLoops``). The rest of a worker (its
    /// tasks, librdkafka's and the Redis client's threads) needs the other half: on 2 cores one
    /// loop cost 1.31–1.38 CPU-s per 100,000 notifications where two cost 1.50–1.63, the
    /// threads waking each other less.
    public var eventLoops: Int?
    /// The legacy binary interface's gateway per environment (`binary-endpoints.<environment>`),
    /// for apps with `transport: binary`; default Apple's (gateway(.sandbox).push.apple.com:2195).
    public var binaryEndpoints: [APNsEnvironment: APNsEndpoint] = [:]
    /// The legacy feedback service per environment (`feedback-endpoints.<environment>`); default
    /// Apple's (feedback(.sandbox).push.apple.com:2196).
    public var feedbackEndpoints: [APNsEnvironment: APNsEndpoint] = [:]
    /// How long the binary gateway has to refuse a frame before it counts as taken
    /// (`binary-quiet-period-ms`), ≥ 1; default 500.
    public var binaryQuietPeriod: Duration = .milliseconds(500)
    /// How often the feedback worker reads the feedback service of each binary app and
    /// environment (`feedback-interval-seconds`), ≥ 1; default 3600.
    public var feedbackInterval: Duration = .seconds(3600)
    /// How long an app's sending to an environment stays suspended fleet-wide after APNs refused
    /// its credential there, before the workers try it again
    /// (`credential-suspension-seconds`), ≥ 1; default 60 (``defaultCredentialSuspension``).
    public var credentialSuspension: Duration = APNsSettings.defaultCredentialSuspension

    /// A minute: long enough that a refused key does not cost a request per batch in flight, short
    /// enough that a key fixed in the developer account is back within one.
    public static let defaultCredentialSuspension: Duration = .seconds(60)

    /// Creates APNs settings; every parameter has the documented default.
    public init(
        endpoint: APNsEndpoint? = nil, endpoints: [APNsEnvironment: APNsEndpoint] = [:], caFile: String? = nil, port: Int = 443,
        connectionsPerPool: Int = 128, minConnectionsPerPool: Int = 1,
        streamsPerConnection: Int = 1000, requestTimeout: Duration = .milliseconds(10_000), eventLoops: Int? = nil
    ) {
        self.minConnectionsPerPool = minConnectionsPerPool
        self.endpoint = endpoint
        self.endpoints = endpoints
        self.caFile = caFile
        self.port = port
        self.connectionsPerPool = connectionsPerPool
        self.streamsPerConnection = streamsPerConnection
        self.requestTimeout = requestTimeout
        self.eventLoops = eventLoops
    }

    /// ``eventLoops``, or half of `cores` (at least one) when it is not set.
    public func effectiveEventLoops(cores: Int) -> Int {
        eventLoops ?? max(1, cores / 2)
    }
}
