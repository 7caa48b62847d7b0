import APNsCore
import NIOCore

/// Everything an ``APNsSimulator`` is told before it starts. Defaults describe a well-behaved
/// sandbox APNs on an ephemeral loopback port with no faults.
public struct APNsSimulatorConfiguration: Sendable {
    /// The address to listen on.
    public var host: String
    /// The HTTP/2 port; 0 picks a free one (read it from ``APNsSimulator/port``).
    public var port: Int
    /// The plain HTTP/1.1 control port (`GET /counters`, `POST /reset`); `nil` disables it,
    /// 0 picks a free one.
    public var controlPort: Int?
    /// Event loop threads; defaults to the number of cores.
    public var threads: Int
    /// Which APNs environment this simulator stands in for (keys and certificates are checked
    /// against it).
    public var environment: APNsEnvironment
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` once a connection is authenticated. Default 1000.
    public var maxConcurrentStreams: Int
    /// With token authentication Apple advertises one stream until the first request on the
    /// connection succeeds; `false` advertises ``maxConcurrentStreams`` from the start.
    public var startWithOneStreamUntilAuthenticated: Bool
    /// Keys accepted for provider tokens (ES256 JWTs), by key id.
    public var providerKeys: [APNsSimulatorProviderKey]
    /// Bundle ids whose topics (with the push type's suffix) may be pushed to.
    public var bundleIDs: Set<String>
    /// Topics that exist but that this provider may not push to (403 Forbidden).
    public var forbiddenTopics: Set<String>
    /// Devices and their behaviour.
    public var devices: APNsSimulatorDevices
    /// How long the simulator waits before answering.
    public var latency: APNsSimulatorLatency
    /// Injected failures.
    public var faults: APNsSimulatorFaults
    /// Keep a record of every request (see ``APNsSimulator/requestRecords()``); costs memory.
    public var recordsRequests: Bool
    /// Track accepted (token, apns-id) pairs to count duplicates; costs memory per accepted
    /// notification. Without it ``APNsSimulatorCounters/duplicates`` stays 0.
    public var tracksDuplicates: Bool
    /// A connection without requests for this long gets GOAWAY with reason IdleTimeout; `nil`
    /// never times out.
    public var idleTimeout: Duration?
    /// The TLS identity; `nil` generates a fresh CA and server certificate at start.
    public var tls: APNsSimulatorTLSIdentity?
    /// Broadcast channels one bundle id may hold (Apple's limit: 10,000); one more is refused
    /// with `CannotCreateChannelConfig`.
    public var maxChannelsPerApp: Int = APNsChannel.maxPerApp
    /// Bundle ids without the broadcast capability: their channel requests are refused with
    /// `FeatureNotEnabled`.
    public var broadcastDisabledBundleIDs: Set<String> = []
    /// The legacy binary interface's gateway port (``APNsSimulatorBinaryHandler``); `nil`
    /// serves none, 0 picks a free one.
    public var binaryPort: Int?
    /// The legacy feedback service's port; `nil` serves none, 0 picks a free one.
    public var feedbackPort: Int?
    /// The network between the clients and the simulator: a round trip on every byte, jitter,
    /// a bandwidth cap. `nil` (the default): loopback, nothing in the way. A value, even a round
    /// trip of zero, puts every byte through the delay line, so that runs at different
    /// distances pay the same for it and compare.
    public var network: APNsSimulatorNetwork?
    /// The windows and header limit of its HTTP/2. Default ``APNsSimulatorHTTP2Profile/generous``.
    public var http2: APNsSimulatorHTTP2Profile = .generous
    /// After an answer refusing a notification (any status but 200), a connection's stream limit
    /// drops to 1 until its next 200, as Apple's has been seen to. Default off.
    public var oneStreamAfterRefusal = false

    /// Behaves like Apple's service at `roundTrip` from the client: Apple's windows and SETTINGS
    /// (``APNsSimulatorHTTP2Profile/apple``), one stream until a connection's first
    /// authenticated request and then ``maxConcurrentStreams`` (1,000 unless changed, as
    /// Apple's), and every byte delayed by half the round trip each way. The stream limit
    /// dropping to 1 after a refusal is left to ``oneStreamAfterRefusal``.
    public mutating func behaveLikeApple(roundTrip: Duration, jitter: Duration = .zero, bytesPerSecond: Int? = nil) {
        http2 = .apple
        startWithOneStreamUntilAuthenticated = true
        network = APNsSimulatorNetwork(roundTrip: roundTrip, jitter: jitter, bytesPerSecond: bytesPerSecond)
    }

    public init(
        host: String = "127.0.0.1",
        port: Int = 0,
        controlPort: Int? = nil,
        threads: Int = System.coreCount,
        environment: APNsEnvironment = .sandbox,
        maxConcurrentStreams: Int = 1000,
        startWithOneStreamUntilAuthenticated: Bool = true,
        providerKeys: [APNsSimulatorProviderKey] = [],
        bundleIDs: Set<String> = [],
        forbiddenTopics: Set<String> = [],
        devices: APNsSimulatorDevices = APNsSimulatorDevices(),
        latency: APNsSimulatorLatency = .none,
        faults: APNsSimulatorFaults = APNsSimulatorFaults(),
        recordsRequests: Bool = false,
        tracksDuplicates: Bool = true,
        idleTimeout: Duration? = nil,
        tls: APNsSimulatorTLSIdentity? = nil
    ) {
        self.host = host
        self.port = port
        self.controlPort = controlPort
        self.threads = threads
        self.environment = environment
        self.maxConcurrentStreams = maxConcurrentStreams
        self.startWithOneStreamUntilAuthenticated = startWithOneStreamUntilAuthenticated
        self.providerKeys = providerKeys
        self.bundleIDs = bundleIDs
        self.forbiddenTopics = forbiddenTopics
        self.devices = devices
        self.latency = latency
        self.faults = faults
        self.recordsRequests = recordsRequests
        self.tracksDuplicates = tracksDuplicates
        self.idleTimeout = idleTimeout
        self.tls = tls
    }
}
