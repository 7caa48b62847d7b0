import APNsCore
import Atomics
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS
import X509

/// An APNs stand-in speaking the real protocol: HTTP/2 over TLS with ALPN `h2`, Apple's
/// validation rules, status codes and reasons, provider token checks, device states, latency,
/// injected faults, and counters that tests and benchmarks read.
///
/// ```swift
/// let simulator = APNsSimulator(configuration: .init(providerKeys: [key], bundleIDs: ["com.example.app"]))
/// try await simulator.start()
/// // point a client at 127.0.0.1:simulator.port trusting simulator.tlsIdentity.certificateAuthorityPEM
/// let counters = try await simulator.counters()
/// try await simulator.shutdown()
/// ```
public final class APNsSimulator: Sendable {
    private enum State {
        case idle
        case running(group: MultiThreadedEventLoopGroup, channels: [any Channel], shared: APNsSimulatorSharedState)
        case stopped
    }

    public let configuration: APNsSimulatorConfiguration
    /// The TLS identity in use (generated at init when the configuration has none).
    public let tlsIdentity: APNsSimulatorTLSIdentity
    private let logger: Logger
    private let state = NIOLockedValueBox(State.idle)
    private let ports = NIOLockedValueBox<(server: Int, control: Int?, binary: Int?, feedback: Int?)>((0, nil, nil, nil))

    /// Creates a simulator; nothing listens until ``start()``.
    public init(configuration: APNsSimulatorConfiguration, logger: Logger = Logger(label: "apns-simulator")) throws {
        self.configuration = configuration
        self.tlsIdentity = try configuration.tls ?? APNsSimulatorTLSIdentity.generate()
        self.logger = logger
    }

    /// The HTTP/2 port, once started.
    public var port: Int { ports.withLockedValue { $0.server } }
    /// The HTTP/1.1 control port, once started, if enabled.
    public var controlPort: Int? { ports.withLockedValue { $0.control } }
    /// The binary interface's gateway port, once started, if enabled.
    public var binaryPort: Int? { ports.withLockedValue { $0.binary } }
    /// The feedback service's port, once started, if enabled.
    public var feedbackPort: Int? { ports.withLockedValue { $0.feedback } }

    /// Binds the ports and starts serving.
    public func start() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, configuration.threads))
        let shared = APNsSimulatorSharedState(configuration: configuration, eventLoops: Array(group.makeIterator()))
        do {
            let sslContext = try NIOSSLContext(configuration: makeTLSConfiguration())
            let server = try await makeServerBootstrap(group: group, shared: shared, sslContext: sslContext)
                .bind(host: configuration.host, port: configuration.port).get()
            var channels: [any Channel] = [server]
            var controlPort: Int?
            if let requested = configuration.controlPort {
                let control = try await APNsSimulatorControlServer.bind(
                    group: group, host: configuration.host, port: requested, simulator: self)
                channels.append(control)
                controlPort = control.localAddress?.port
            }
            var binaryPorts: [Int?] = []
            for (requested, role) in [(configuration.binaryPort, APNsSimulatorBinaryHandler.Role.gateway), (configuration.feedbackPort, .feedback)] {
                guard let requested else {
                    binaryPorts.append(nil)
                    continue
                }
                let listener = try await Self.binaryBootstrap(group: group, shared: shared, sslContext: sslContext, role: role)
                    .bind(host: configuration.host, port: requested).get()
                channels.append(listener)
                binaryPorts.append(listener.localAddress?.port)
            }
            let started = state.withLockedValue { state -> Bool in
                guard case .idle = state else { return false }
                state = .running(group: group, channels: channels, shared: shared)
                return true
            }
            guard started else { throw APNsSimulatorError.notStartable }
            ports.withLockedValue { $0 = (server.localAddress?.port ?? 0, controlPort, binaryPorts[0], binaryPorts[1]) }
            logger.info("APNs simulator listening", metadata: ["port": "\(server.localAddress?.port ?? 0)"])
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Stops listening, closes every connection and the event loops.
    public func shutdown() async throws {
        let previous = state.withLockedValue { state -> State in
            defer { state = .stopped }
            return state
        }
        guard case .running(let group, let channels, _) = previous else { return }
        for channel in channels {
            try? await channel.close()
        }
        try await group.shutdownGracefully()
    }

    /// The counters summed over all event loops.
    public func counters() async throws -> APNsSimulatorCounters {
        let (group, shared) = try running()
        var counters = APNsSimulatorCounters()
        var acceptances: [APNsSimulatorLoopState.NotificationKey: Int] = [:]
        for loop in group.makeIterator() {
            let loopState = shared.loopState(for: loop)
            let snapshot = try await loop.submit {
                (
                    loopState.requests, loopState.accepted, loopState.stalled, loopState.rejections,
                    loopState.acceptances, loopState.pings, loopState.unresponsiveConnections
                )
            }.get()
            counters.requests += snapshot.0
            counters.accepted += snapshot.1
            counters.stalled += snapshot.2
            counters.rejections.merge(snapshot.3, uniquingKeysWith: +)
            acceptances.merge(snapshot.4, uniquingKeysWith: +)
            counters.pings += snapshot.5
            counters.unresponsiveConnections += snapshot.6
        }
        // What each device would show: every copy without a collapse id, and one per collapse id.
        var shown: [String: (uncollapsed: Int, collapseIDs: Set<String>)] = [:]
        for (key, count) in acceptances {
            counters.distinctAccepted += 1
            counters.duplicates += count - 1
            counters.acceptedPerToken[key.deviceToken, default: 0] += count
            if let collapseID = key.collapseID {
                shown[key.deviceToken, default: (0, [])].collapseIDs.insert(collapseID)
            } else {
                shown[key.deviceToken, default: (0, [])].uncollapsed += count
            }
        }
        counters.shownTwice = shown.values.count { $0.uncollapsed + $0.collapseIDs.count > 1 }
        counters.connections = shared.connections.load(ordering: .relaxed)
        counters.goAways = shared.goAways.load(ordering: .relaxed)
        counters.connectionResets = shared.connectionResets.load(ordering: .relaxed)
        counters.tlsHandshakeFailures = shared.tlsHandshakeFailures.load(ordering: .relaxed)
        counters.idleTimeouts = shared.idleTimeouts.load(ordering: .relaxed)
        counters.channels = shared.channels.count
        counters.broadcasts = shared.channels.broadcasts
        return counters
    }

    /// Requests answered 200 so far: the cheap part of ``counters()``, for sampling progress
    /// often without collecting the per-token tallies.
    public func acceptedCount() async throws -> Int {
        let (group, shared) = try running()
        var accepted = 0
        for loop in group.makeIterator() {
            let loopState = shared.loopState(for: loop)
            accepted += try await loop.submit { loopState.accepted }.get()
        }
        return accepted
    }

    /// Every recorded request (when ``APNsSimulatorConfiguration/recordsRequests`` is on), in no
    /// particular order across connections.
    public func requestRecords() async throws -> [APNsSimulatorRequestRecord] {
        let (group, shared) = try running()
        var records: [APNsSimulatorRequestRecord] = []
        for loop in group.makeIterator() {
            let loopState = shared.loopState(for: loop)
            records += try await loop.submit { loopState.records }.get()
        }
        return records
    }

    /// Changes the injected faults and the answer time while running (a fault storm that starts
    /// and ends mid-campaign); connections already open keep going under the new settings.
    public func setFaults(_ faults: APNsSimulatorFaults, latency: APNsSimulatorLatency? = nil) async throws {
        let (group, shared) = try running()
        for loop in group.makeIterator() {
            let loopState = shared.loopState(for: loop)
            try await loop.submit {
                loopState.faults = faults
                if let latency { loopState.latency = latency }
            }.get()
        }
    }

    /// Zeroes every counter and forgets every record.
    public func reset() async throws {
        let (group, shared) = try running()
        for loop in group.makeIterator() {
            let loopState = shared.loopState(for: loop)
            try await loop.submit { loopState.reset() }.get()
        }
        shared.resetGlobalCounters()
    }

    private func running() throws(APNsSimulatorError) -> (MultiThreadedEventLoopGroup, APNsSimulatorSharedState) {
        let current = state.withLockedValue { state -> (MultiThreadedEventLoopGroup, APNsSimulatorSharedState)? in
            guard case .running(let group, _, let shared) = state else { return nil }
            return (group, shared)
        }
        guard let current else { throw .notRunning }
        return current
    }

    private func makeTLSConfiguration() throws -> TLSConfiguration {
        let chain = try NIOSSLCertificate.fromPEMBytes(Array(tlsIdentity.serverCertificatePEM.utf8))
        let key = try NIOSSLPrivateKey(bytes: Array(tlsIdentity.serverPrivateKeyPEM.utf8), format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv12
        tls.applicationProtocols = ["h2"]
        // Client certificates are optional (token authentication needs none) and must come from
        // the simulator's CA when presented.
        tls.certificateVerification = .optionalVerification
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(tlsIdentity.certificateAuthorityPEM.utf8)))
        return tls
    }

    /// A listener of the binary interface (gateway or feedback service), TLS with the
    /// simulator's identity.
    private static func binaryBootstrap(
        group: MultiThreadedEventLoopGroup, shared: APNsSimulatorSharedState, sslContext: NIOSSLContext, role: APNsSimulatorBinaryHandler.Role
    ) async throws -> ServerBootstrap {
        ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                shared.connections.wrappingIncrement(ordering: .relaxed)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    try channel.pipeline.syncOperations.addHandler(APNsSimulatorBinaryHandler(shared: shared, role: role))
                }
            }
    }

    private func makeServerBootstrap(
        group: MultiThreadedEventLoopGroup, shared: APNsSimulatorSharedState, sslContext: NIOSSLContext
    ) async throws -> ServerBootstrap {
        return ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                shared.connections.wrappingIncrement(ordering: .relaxed)
                // The initializer runs on the new channel's loop, the only one touching its state.
                let failureRate = shared.loopState(for: channel.eventLoop).faults.tlsHandshakeFailureRate
                if failureRate > 0, Double.random(in: 0..<1) < failureRate {
                    shared.tlsHandshakeFailures.wrappingIncrement(ordering: .relaxed)
                    return channel.close()
                }
                let network = shared.configuration.network
                return channel.eventLoop.makeCompletedFuture {
                    if let network {
                        // Next to the socket: the TLS handshake crosses the distance too.
                        try channel.pipeline.syncOperations.addHandler(APNsSimulatorNetworkHandler(network: network))
                    }
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    try channel.pipeline.syncOperations.addHandler(
                        APNsSimulatorHandshakeHandler(shared: shared))
                }
            }
    }
}
