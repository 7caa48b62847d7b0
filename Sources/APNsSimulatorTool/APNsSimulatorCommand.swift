import APNsCore
import APNsSimulator
import ArgumentParser
import Foundation
import Logging

/// `apns-sim`: runs the APNs simulator until interrupted.
@main
struct APNsSimulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns-sim",
        abstract: "An APNs stand-in speaking HTTP/2 over TLS, for tests, demos and benchmarks.")

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"
    @Option(help: "HTTP/2 port (0 picks a free one).")
    var port = 2197
    @Option(help: "HTTP/1.1 control port for GET /counters and POST /reset (0 picks a free one).")
    var controlPort: Int?
    @Option(help: "Event loop threads (default: number of cores).")
    var threads: Int?
    @Option(help: "Environment the simulator stands in for: sandbox or production.")
    var environment = "sandbox"
    @Option(help: "Where to write the generated CA certificate (PEM) that clients must trust.")
    var caOut: String?
    @Option(help: "Where to write the bound ports as JSON {\"port\":…,\"controlPort\":…} once listening.")
    var portsOut: String?
    @Option(
        name: .customLong("key"),
        help: "An accepted provider key as KEYID:TEAMID:PATH, PATH a PEM public key or .p8 private key; repeatable.")
    var keys: [String] = []
    @Option(name: .customLong("bundle-id"), help: "An allowed bundle id; repeatable.")
    var bundleIDs: [String] = []
    @Option(help: "Also serve the legacy binary interface's gateway on this port (0 picks one); client certificates only.")
    var binaryPort: Int?
    @Option(help: "Also serve the legacy feedback service on this port (0 picks one): the --unregistered tokens.")
    var feedbackPort: Int?
    @Option(help: "The binary gateway answers Shutdown after every N frames it takes on a connection.")
    var binaryShutdownEvery: Int?
    @Option(name: .customLong("max-channels"), help: "Broadcast channels one bundle id may hold (Apple's limit: 10000).")
    var maxChannels: Int = 10_000
    @Option(name: .customLong("broadcast-disabled"), help: "A bundle id whose channel requests get FeatureNotEnabled; repeatable.")
    var broadcastDisabled: [String] = []
    @Option(name: .customLong("unregistered"), help: "A token answered 410 Unregistered; repeatable.")
    var unregistered: [String] = []
    @Option(name: .customLong("bad-token"), help: "A token answered 400 BadDeviceToken; repeatable.")
    var badTokens: [String] = []
    @Option(help: "SETTINGS_MAX_CONCURRENT_STREAMS after authentication.")
    var maxConcurrentStreams = 1000
    @Option(help: "Response latency in milliseconds.")
    var latencyMs: Int?
    @Option(help: "Spread the latency uniformly over ± this many milliseconds.")
    var latencyJitterMs = 0
    @Option(help: "Server certificate chain (PEM) to serve instead of a generated one.")
    var certificate: String?
    @Option(help: "Private key (PEM) of --certificate.")
    var privateKey: String?
    @Option(help: "The CA certificate (PEM) that issued --certificate; written to --ca-out and trusted for client certificates.")
    var certificateAuthority: String?
    @Option(help: "Fraction of requests answered 503 ServiceUnavailable.")
    var serviceUnavailableRate = 0.0
    @Option(help: "Fraction of requests answered 500 InternalServerError.")
    var internalServerErrorRate = 0.0
    @Option(help: "Send GOAWAY on every N-th stream.")
    var goAwayEvery: Int?
    @Option(help: "Reset the connection on every N-th stream.")
    var resetEvery: Int?
    @Option(help: "Fraction of requests answered 503 Shutdown.")
    var shutdownRate = 0.0
    @Option(help: "Fraction of requests answered 429 TooManyRequests.")
    var tooManyRequestsRate = 0.0
    @Option(help: "A Retry-After value (seconds or an HTTP date) that every 429 and 503 answer carries.")
    var retryAfter: String?
    @Option(help: "Fraction of requests never answered.")
    var stallRate = 0.0
    @Option(help: "Fraction of TLS handshakes aborted.")
    var tlsFailureRate = 0.0
    @Option(help: "Each connection stops reading and answering (PINGs too) after N streams.")
    var unresponsiveAfterStreams: Int?
    @Option(help: "GOAWAY IdleTimeout after this many idle seconds.")
    var idleTimeoutSeconds: Int?
    @Flag(help: "Do not track duplicates or per-token counts (saves memory in long benchmarks).")
    var noDuplicateTracking = false
    @Option(
        help:
            "apple: Apple's windows and SETTINGS (65,535-byte windows, one stream until a connection's first authenticated request, then 1000); default: 1 MiB windows."
    )
    var profile = "default"
    @Option(name: .customLong("rtt-ms"), help: "Round trip applied to every byte, both directions (half each way), in milliseconds.")
    var roundTripMs = 0
    @Option(name: .customLong("rtt-jitter-ms"), help: "Up to this many milliseconds added to each chunk's one-way delay (order kept).")
    var roundTripJitterMs = 0
    @Option(help: "Bytes per second per connection and direction (default unbounded).")
    var bandwidth: Int?
    @Flag(help: "After an answer refusing a notification, a connection's stream limit drops to 1 until its next success.")
    var oneStreamAfterRefusal = false

    /// The four bytes of a dotted IPv4 address; `nil` for anything else.
    static func ipv4Address(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
        guard parts.count == 4, parts.allSatisfy({ $0 != nil }) else { return nil }
        return parts.map { $0! }
    }

    func run() async throws {
        guard let environment = APNsEnvironment(rawValue: environment) else {
            throw ValidationError("environment must be sandbox or production")
        }
        var configuration = APNsSimulatorConfiguration(
            host: host, port: port, controlPort: controlPort, environment: environment,
            maxConcurrentStreams: maxConcurrentStreams, providerKeys: try keys.map(Self.parseKey),
            bundleIDs: Set(bundleIDs), tracksDuplicates: !noDuplicateTracking)
        if let threads { configuration.threads = threads }
        guard roundTripMs >= 0, roundTripJitterMs >= 0, (bandwidth ?? 1) > 0 else {
            throw ValidationError("--rtt-ms and --rtt-jitter-ms must be at least 0, --bandwidth above 0")
        }
        let network = APNsSimulatorNetwork(
            roundTrip: .milliseconds(roundTripMs), jitter: .milliseconds(roundTripJitterMs), bytesPerSecond: bandwidth)
        switch profile {
        case "apple":
            configuration.behaveLikeApple(roundTrip: network.roundTrip, jitter: network.jitter, bytesPerSecond: network.bytesPerSecond)
        case "default":
            configuration.network = network.isLoopback ? nil : network
        default:
            throw ValidationError("--profile is default or apple, got '\(profile)'")
        }
        configuration.oneStreamAfterRefusal = oneStreamAfterRefusal
        guard maxChannels >= 0 else { throw ValidationError("--max-channels must be at least 0") }
        configuration.maxChannelsPerApp = maxChannels
        configuration.binaryPort = binaryPort
        configuration.feedbackPort = feedbackPort
        configuration.broadcastDisabledBundleIDs = Set(broadcastDisabled)
        configuration.devices.unregistered = Dictionary(
            unregistered.map { ($0.lowercased(), Int64(Date().timeIntervalSince1970 * 1000)) },
            uniquingKeysWith: { first, _ in first })
        configuration.devices.bad = Set(badTokens.map { $0.lowercased() })
        if let latencyMs {
            configuration.latency =
                latencyJitterMs == 0
                ? .fixed(.milliseconds(latencyMs))
                : .uniform(.milliseconds(max(0, latencyMs - latencyJitterMs)), .milliseconds(latencyMs + latencyJitterMs))
        }
        configuration.faults = APNsSimulatorFaults(
            internalServerErrorRate: internalServerErrorRate, serviceUnavailableRate: serviceUnavailableRate,
            shutdownRate: shutdownRate, tooManyRequestsRate: tooManyRequestsRate, retryAfter: retryAfter,
            goAwayEveryStreams: goAwayEvery, connectionResetEveryStreams: resetEvery,
            stallRate: stallRate, tlsHandshakeFailureRate: tlsFailureRate,
            unresponsiveAfterStreams: unresponsiveAfterStreams)
        configuration.faults.binaryShutdownEveryFrames = binaryShutdownEvery
        configuration.idleTimeout = idleTimeoutSeconds.map { .seconds($0) }
        if let certificate, let privateKey, let certificateAuthority {
            configuration.tls = APNsSimulatorTLSIdentity(
                certificateAuthorityPEM: try String(contentsOfFile: certificateAuthority, encoding: .utf8),
                serverCertificatePEM: try String(contentsOfFile: certificate, encoding: .utf8),
                serverPrivateKeyPEM: try String(contentsOfFile: privateKey, encoding: .utf8))
        } else if certificate != nil || privateKey != nil || certificateAuthority != nil {
            throw ValidationError("--certificate, --private-key and --certificate-authority go together")
        } else if let address = Self.ipv4Address(host), address != [127, 0, 0, 1], address != [0, 0, 0, 0] {
            // Listening on an address of its own (a test host): the generated certificate names it
            // too, so that clients connecting to it verify the server as usual.
            configuration.tls = try APNsSimulatorTLSIdentity.generate(ipv4Addresses: [[127, 0, 0, 1], address])
        }

        var logger = Logger(label: "apns-sim")
        logger.logLevel = .info
        let simulator = try APNsSimulator(configuration: configuration, logger: logger)
        if let caOut {
            try simulator.tlsIdentity.writeCertificateAuthority(to: caOut)
        }
        try await simulator.start()
        let ports =
            #"{"port":\#(simulator.port),"controlPort":\#(simulator.controlPort.map(String.init) ?? "null"),"binaryPort":\#(simulator.binaryPort.map(String.init) ?? "null"),"feedbackPort":\#(simulator.feedbackPort.map(String.init) ?? "null")}"#
        if let portsOut {
            try Data(ports.utf8).write(to: URL(fileURLWithPath: portsOut), options: .atomic)
        }
        var banner = "apns-sim listening on https://\(host):\(simulator.port) \(ports)\n"
        if let caOut {
            banner += "Trust the simulator's CA: \(caOut) (e.g. curl --cacert \(caOut), SSL_CERT_FILE=\(caOut))\n"
        }
        FileHandle.standardOutput.write(Data(banner.utf8))
        await Self.waitForTerminationSignal()
        try await simulator.shutdown()
    }

    private static func parseKey(_ text: String) throws -> APNsSimulatorProviderKey {
        let parts = text.split(separator: ":", maxSplits: 2).map(String.init)
        guard parts.count == 3 else { throw ValidationError("--key must be KEYID:TEAMID:PATH") }
        let pem = try String(contentsOfFile: parts[2], encoding: .utf8)
        return try APNsSimulatorProviderKey(keyID: parts[0], teamID: parts[1], pem: pem)
    }

    private static func waitForTerminationSignal() async {
        let (signals, continuation) = AsyncStream<Int32>.makeStream()
        let sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
        for await _ in signals { break }
        sources.forEach { $0.cancel() }
    }
}
