/// Failures the simulator injects, to exercise a client's recovery paths. Rates are fractions of
/// requests (0...1); "every N" counts streams across the whole simulator.
public struct APNsSimulatorFaults: Sendable, Hashable {
    /// Fraction of valid requests answered 500 InternalServerError.
    public var internalServerErrorRate: Double
    /// Fraction of valid requests answered 503 ServiceUnavailable.
    public var serviceUnavailableRate: Double
    /// Fraction of valid requests answered 503 Shutdown.
    public var shutdownRate: Double
    /// Fraction of valid requests answered 429 TooManyRequests.
    public var tooManyRequestsRate: Double
    /// A `Retry-After` header value (seconds, or an HTTP date) that every 429 and 503 answer
    /// carries; APNs documents none, but a client must honour one where it comes.
    public var retryAfter: String?
    /// Every valid request is answered 403 InvalidProviderToken, as when the provider key was
    /// revoked in the developer account.
    public var rejectsProviderTokens: Bool
    /// Send GOAWAY on the connection carrying every N-th stream: streams the server has seen
    /// are still answered, streams the client opens before it reads the GOAWAY are refused, and
    /// the connection closes once the answered ones are done.
    public var goAwayEveryStreams: Int?
    /// Close the connection carrying every N-th stream without GOAWAY, leaving that stream and
    /// every unanswered stream on the connection without a response.
    public var connectionResetEveryStreams: Int?
    /// Fraction of requests that are never answered (the stream stays open until the client
    /// gives up).
    public var stallRate: Double
    /// Fraction of new connections whose TLS handshake is aborted.
    public var tlsHandshakeFailureRate: Double
    /// Each connection goes silent when the client opens stream N + 1: it stops reading, so
    /// that request and every later one, PINGs included, get no answer, as behind a dead
    /// network path. The TCP connection stays open.
    public var unresponsiveAfterStreams: Int?
    /// The binary gateway answers `Shutdown` after every N-th frame it takes on a connection,
    /// naming that frame, and closes: the frames written behind it are to be written again.
    public var binaryShutdownEveryFrames: Int? = nil

    public init(
        internalServerErrorRate: Double = 0,
        serviceUnavailableRate: Double = 0,
        shutdownRate: Double = 0,
        tooManyRequestsRate: Double = 0,
        retryAfter: String? = nil,
        rejectsProviderTokens: Bool = false,
        goAwayEveryStreams: Int? = nil,
        connectionResetEveryStreams: Int? = nil,
        stallRate: Double = 0,
        tlsHandshakeFailureRate: Double = 0,
        unresponsiveAfterStreams: Int? = nil
    ) {
        self.internalServerErrorRate = internalServerErrorRate
        self.serviceUnavailableRate = serviceUnavailableRate
        self.shutdownRate = shutdownRate
        self.tooManyRequestsRate = tooManyRequestsRate
        self.retryAfter = retryAfter
        self.rejectsProviderTokens = rejectsProviderTokens
        self.goAwayEveryStreams = goAwayEveryStreams
        self.connectionResetEveryStreams = connectionResetEveryStreams
        self.stallRate = stallRate
        self.tlsHandshakeFailureRate = tlsHandshakeFailureRate
        self.unresponsiveAfterStreams = unresponsiveAfterStreams
    }
}
