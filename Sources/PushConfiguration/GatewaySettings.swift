/// The online channel's settings (`gateway:`): `pushfleet gateway`, the WebSocket server app
/// instances connect to while open, and the connect tokens the API issues for it.
public struct GatewaySettings: Sendable, Equatable {
    /// Address to listen on (`host`); default `0.0.0.0`.
    public var host: String
    /// Port to listen on (`port`), 0...65535 (0: any free port); default 8090.
    public var port: Int
    /// This gateway's name in the presence records (`id`): 1–64 bytes of `A-Z a-z 0-9 . _ -`;
    /// default none, then `pushfleet gateway` uses its host name. Each gateway of a fleet needs
    /// its own.
    public var id: String?
    /// The file holding the key connect tokens are signed with (`secret-file`): shared by the API
    /// (which issues them) and every gateway (which verifies them); at least 32 bytes. Without
    /// it the API issues none and the gateway does not start.
    public var secretFile: String?
    /// How long a connect token stays valid (`token-ttl-seconds`), 1...86,400; default 600. A
    /// token only opens a connection: an open one lives past its token.
    public var tokenTimeToLive: Duration
    /// Interval of the gateway's pings to each connection (`ping-interval-seconds`), 1...300;
    /// default 25 (under the 30 s of idle connection cutting common in mobile networks).
    public var pingInterval: Duration
    /// A connection from which nothing came for this long is closed (`idle-timeout-seconds`),
    /// ≥ 2 × ping interval; default 60.
    public var idleTimeout: Duration
    /// Largest frame a client may send (`max-frame-bytes`), 125...1,048,576; default 16,384.
    public var maxFrameBytes: Int
    /// Frames a connection may send per second on average (`messages-per-second`), ≥ 1; default 10.
    public var messagesPerSecond: Int
    /// Frames a connection may send at once above that rate (`message-burst`), ≥ 1; default 20.
    public var messageBurst: Int
    /// How long an online send waits for the app's ack before it goes through APNs instead
    /// (`ack-timeout-ms`), 100...60,000; default 5,000.
    public var ackTimeout: Duration
    /// `push.online` messages (up to 1,000 sends each) a gateway delivers at once, each waiting
    /// for its acks (`deliveries-in-flight`), 1...10,000; default 256.
    public var deliveriesInFlight: Int
    /// Most notifications an online-only job keeps in one device's inbox (`inbox-size`),
    /// 1...10,000; default 100. One over the bound drops the entry nearest to its expiration.
    public var inboxSize: Int
    /// How long an inbox keeps a notification of an online-only job without an `expiration`
    /// (`inbox-ttl-seconds`), 60...2,592,000 (30 days); default 604,800 (7 days). A job's
    /// expiration is kept to at most this long too.
    public var inboxTimeToLive: Duration

    /// Creates gateway settings with the documented defaults.
    public init(
        host: String = "0.0.0.0", port: Int = 8090, id: String? = nil, secretFile: String? = nil,
        tokenTimeToLive: Duration = .seconds(600), pingInterval: Duration = .seconds(25), idleTimeout: Duration = .seconds(60),
        maxFrameBytes: Int = 16_384, messagesPerSecond: Int = 10, messageBurst: Int = 20,
        ackTimeout: Duration = .milliseconds(5_000), deliveriesInFlight: Int = 256, inboxSize: Int = 100,
        inboxTimeToLive: Duration = .seconds(604_800)
    ) {
        self.host = host
        self.port = port
        self.id = id
        self.secretFile = secretFile
        self.tokenTimeToLive = tokenTimeToLive
        self.pingInterval = pingInterval
        self.idleTimeout = idleTimeout
        self.maxFrameBytes = maxFrameBytes
        self.messagesPerSecond = messagesPerSecond
        self.messageBurst = messageBurst
        self.ackTimeout = ackTimeout
        self.deliveriesInFlight = deliveriesInFlight
        self.inboxSize = inboxSize
        self.inboxTimeToLive = inboxTimeToLive
    }

    /// How long an online send waits in the resend buffer before APNs takes it when no gateway
    /// handed it back: twice ``ackTimeout`` (the gateway's wait, and as long again for its way
    /// through Kafka). The workers read it from the same `gateway:` section.
    public var fallbackDelay: Duration { ackTimeout * 2 }

    /// The shortest connect-token key accepted: 256 bits, the size of the HMAC-SHA256 it keys.
    public static let minimumSecretBytes = 32

    /// The connect-token key: the contents of ``secretFile`` (one trailing newline removed).
    ///
    /// - Throws: A ``ConfigurationError`` keyed `gateway.secret-file` when it is not set, cannot
    ///   be read, or is shorter than 32 bytes. The error never contains the file's contents.
    public func resolvedSecret() throws(ConfigurationError) -> [UInt8] {
        guard let secretFile else {
            throw ConfigurationError(key: "gateway.secret-file", message: "is not set: connect tokens need a key shared by the API and the gateways")
        }
        let secret = Array(try SecretFile.read(secretFile, key: "gateway.secret-file").utf8)
        guard secret.count >= Self.minimumSecretBytes else {
            throw ConfigurationError(
                key: "gateway.secret-file",
                message: "file '\(secretFile)' holds \(secret.count) bytes; a connect-token key needs at least \(Self.minimumSecretBytes)")
        }
        return secret
    }
}
