import APNsCore

/// How an ``APNsClient`` connects and behaves. Every default is Apple's recommendation or a
/// conservative choice for a worker sending to many devices.
public struct APNsClientConfiguration: Sendable {
    /// Where to connect instead of Apple (tests, benchmarks, the simulator).
    public struct Endpoint: Sendable, Hashable {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }

    /// Which certificate authorities the client trusts for the server's certificate. Verification
    /// (chain and hostname) is always on.
    public enum TrustRoots: Sendable, Hashable {
        /// The system's trust store (Apple's real endpoints).
        case system
        /// Only the CA certificates in this PEM text (the simulator's CA).
        case pem(String)
        /// Only the CA certificates in this PEM file.
        case pemFile(String)
    }

    /// Connects to `environment.host` on this port. Apple serves 443 and 2197. Default 443.
    public var applePort: Int
    /// Overrides the endpoint for every environment; `nil` uses Apple's hosts.
    public var endpointOverride: Endpoint?
    /// Overrides the endpoint of one environment, before ``endpointOverride``.
    public var environmentEndpoints: [APNsEnvironment: Endpoint]
    /// Overrides the channel management endpoint of one environment. Without one, management
    /// requests go where the environment's notifications go when that is overridden (a relay or
    /// the simulator serves both), and to Apple's management hosts otherwise.
    public var channelManagementEndpoints: [APNsEnvironment: Endpoint] = [:]
    /// Overrides the binary interface's gateway of one environment (Apple's:
    /// gateway(.sandbox).push.apple.com:2195). It speaks another protocol than the HTTP/2
    /// endpoints, so no other override applies to it.
    public var binaryGatewayEndpoints: [APNsEnvironment: Endpoint] = [:]
    /// Overrides the feedback service of one environment (Apple's:
    /// feedback(.sandbox).push.apple.com:2196).
    public var feedbackServiceEndpoints: [APNsEnvironment: Endpoint] = [:]
    /// How long the binary interface's gateway has to refuse a frame: a frame no error response
    /// named within this time after it was written counts as taken. Default 500 ms.
    public var binaryQuietPeriod: Duration = .milliseconds(500)
    /// How often a frame is written on the binary interface when connections close without an
    /// error response (nothing then says whether it was taken) before it fails. Default 3.
    public var binaryMaxWrites = 3
    /// Frames written on a binary connection before the quiet period is waited out. A connection
    /// that closes without an error response leaves its last slice to be written again, so a
    /// slice should be well below the number of frames a connection carries. Default 1000: with
    /// the quiet period, 2,000 frames per second per connection.
    public var binarySliceFrames = 1000
    /// Default ``TrustRoots/system``.
    public var trustRoots: TrustRoots
    /// Connections per pool (one pool per credential and environment): the pool's size, or
    /// with ``minimumConnectionsPerPool`` the most it grows to. Default 2.
    public var connectionsPerPool: Int
    /// With a value, a pool sizes itself to the demand between this many connections and
    /// ``connectionsPerPool`` (``APNsPoolSizing``); `nil` (the default) keeps it at
    /// ``connectionsPerPool``.
    public var minimumConnectionsPerPool: Int?
    /// Upper bound on streams per connection whatever the server advertises. Default 1000.
    public var maxConcurrentStreamsPerConnection: Int
    /// Callers allowed to wait for a stream per pool before ``APNsError/Code/tooManyWaiters``.
    /// Default 10 000.
    public var maxWaitersPerPool: Int
    /// Time for one attempt: waiting for a stream, sending and receiving the answer. Default 10 s.
    public var requestTimeout: Duration
    /// Time to open a connection (TCP, TLS and the server's SETTINGS). Default 10 s.
    public var connectTimeout: Duration
    /// A PING is sent this often on every connection; `nil` disables keepalive. Default 60 s.
    public var pingInterval: Duration?
    /// A PING unanswered for this long closes the connection. Default 10 s.
    public var pingTimeout: Duration
    /// Delay between opening the connections of a pool. Default 100 ms.
    public var connectionSpacing: Duration
    /// Reconnect delay after the first failure, doubled per failure, jittered. Default 100 ms.
    public var reconnectBackoffBase: Duration
    /// Longest reconnect delay. Default 30 s.
    public var reconnectBackoffMax: Duration
    /// Attempts per notification for retryable outcomes (429, 500, 503, connection loss,
    /// timeout). Default 1: the pipeline's resend buffer retries, with a durable record. Refused
    /// streams (GOAWAY, never processed by APNs) and one provider token refresh are always
    /// retried and do not count. A `Retry-After` on a retryable answer makes the wait before the
    /// next attempt at least that long; one longer than 5 s ends the attempts with that answer
    /// (``APNsResponse/retryAfter`` says how long to wait).
    public var maxAttempts: Int
    /// Delay before a retry, doubled per attempt, jittered. Default 50 ms.
    public var retryBackoffBase: Duration
    /// How often a notification is moved to another connection after its stream was refused
    /// before giving up with ``APNsError/Code/refused``. Default 10.
    public var maxRefusedStreamRetries: Int
    /// Provider token lifetime policy.
    public var providerTokenPolicy: APNsProviderTokenPolicy

    /// The rule each pool sizes itself by.
    public var poolSizing: APNsPoolSizing {
        guard let minimum = minimumConnectionsPerPool else {
            return .fixed(connections: connectionsPerPool, streamCap: maxConcurrentStreamsPerConnection)
        }
        return APNsPoolSizing(
            minimumConnections: min(minimum, connectionsPerPool), maximumConnections: connectionsPerPool,
            streamCap: maxConcurrentStreamsPerConnection)
    }

    public init(
        applePort: Int = 443,
        endpointOverride: Endpoint? = nil,
        environmentEndpoints: [APNsEnvironment: Endpoint] = [:],
        trustRoots: TrustRoots = .system,
        connectionsPerPool: Int = 2,
        maxConcurrentStreamsPerConnection: Int = 1000,
        maxWaitersPerPool: Int = 10_000,
        requestTimeout: Duration = .seconds(10),
        connectTimeout: Duration = .seconds(10),
        pingInterval: Duration? = .seconds(60),
        pingTimeout: Duration = .seconds(10),
        connectionSpacing: Duration = .milliseconds(100),
        reconnectBackoffBase: Duration = .milliseconds(100),
        reconnectBackoffMax: Duration = .seconds(30),
        maxAttempts: Int = 1,
        retryBackoffBase: Duration = .milliseconds(50),
        maxRefusedStreamRetries: Int = 10,
        providerTokenPolicy: APNsProviderTokenPolicy = APNsProviderTokenPolicy(),
        minimumConnectionsPerPool: Int? = nil
    ) {
        self.minimumConnectionsPerPool = minimumConnectionsPerPool
        self.applePort = applePort
        self.endpointOverride = endpointOverride
        self.environmentEndpoints = environmentEndpoints
        self.trustRoots = trustRoots
        self.connectionsPerPool = connectionsPerPool
        self.maxConcurrentStreamsPerConnection = maxConcurrentStreamsPerConnection
        self.maxWaitersPerPool = maxWaitersPerPool
        self.requestTimeout = requestTimeout
        self.connectTimeout = connectTimeout
        self.pingInterval = pingInterval
        self.pingTimeout = pingTimeout
        self.connectionSpacing = connectionSpacing
        self.reconnectBackoffBase = reconnectBackoffBase
        self.reconnectBackoffMax = reconnectBackoffMax
        self.maxAttempts = maxAttempts
        self.retryBackoffBase = retryBackoffBase
        self.maxRefusedStreamRetries = maxRefusedStreamRetries
        self.providerTokenPolicy = providerTokenPolicy
    }

    /// The host and port for an environment's notifications.
    public func endpoint(for environment: APNsEnvironment) -> Endpoint {
        environmentEndpoints[environment] ?? endpointOverride ?? Endpoint(host: environment.host, port: applePort)
    }

    /// The host and port of one of an environment's services.
    public func endpoint(for environment: APNsEnvironment, service: APNsService) -> Endpoint {
        switch service {
        case .push:
            endpoint(for: environment)
        case .channelManagement:
            channelManagementEndpoints[environment] ?? environmentEndpoints[environment] ?? endpointOverride
                ?? Endpoint(host: environment.channelManagementHost, port: environment.channelManagementPort)
        case .binaryGateway:
            binaryGatewayEndpoints[environment]
                ?? Endpoint(host: environment == .sandbox ? "gateway.sandbox.push.apple.com" : "gateway.push.apple.com", port: 2195)
        case .feedbackService:
            feedbackServiceEndpoints[environment]
                ?? Endpoint(host: environment == .sandbox ? "feedback.sandbox.push.apple.com" : "feedback.push.apple.com", port: 2196)
        }
    }
}

/// The APNs services a client connects to, each with its own connections.
public enum APNsService: String, Hashable, Sendable {
    /// Notifications to devices (`/3/device`) and broadcasts on channels (`/4/broadcasts`).
    case push
    /// Apple's channel management API (`/1/apps/<bundle>/channels`).
    case channelManagement
    /// The legacy binary interface's gateway (retired by Apple in 2021; gateways that still
    /// speak it remain).
    case binaryGateway
    /// The legacy feedback service: the tokens that stopped being valid, as tuples.
    case feedbackService
}
