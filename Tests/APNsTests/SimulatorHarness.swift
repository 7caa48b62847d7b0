import APNs
import APNsCore
import APNsSimulator
import Crypto
import Foundation
import Logging
import NIOCore

/// A simulator and a client pointed at it, trusting its CA with verification on.
struct SimulatorHarness {
    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"
    static let bundleID = "com.example.app"

    let simulator: APNsSimulator
    let client: APNsClient
    let credential: APNsCredential
    let privateKeyPEM: String

    /// Runs `body` against a fresh simulator and client and shuts both down afterwards.
    static func with<Result>(
        simulator configureSimulator: (inout APNsSimulatorConfiguration) throws -> Void = { _ in },
        client configureClient: (inout APNsClientConfiguration) -> Void = { _ in },
        clock: @escaping @Sendable () -> Date = { Date() },
        _ body: (SimulatorHarness) async throws -> Result
    ) async throws -> Result {
        let key = P256.Signing.PrivateKey()
        var simulatorConfiguration = APNsSimulatorConfiguration(
            threads: 2,
            providerKeys: [
                APNsSimulatorProviderKey(keyID: keyID, teamID: teamID, publicKey: key.publicKey)
            ],
            bundleIDs: [bundleID])
        try configureSimulator(&simulatorConfiguration)
        var logger = Logger(label: "apns-simulator")
        logger.logLevel = .warning
        let simulator = try APNsSimulator(configuration: simulatorConfiguration, logger: logger)
        try await simulator.start()
        var clientConfiguration = APNsClientConfiguration(
            endpointOverride: .init(host: "127.0.0.1", port: simulator.port),
            trustRoots: .pem(simulator.tlsIdentity.certificateAuthorityPEM),
            connectionsPerPool: 1,
            // Generous: debug builds under CI load are slow, and a timed-out request that APNs
            // still accepts would be counted twice after its retry.
            requestTimeout: .seconds(60),
            connectionSpacing: .milliseconds(1),
            reconnectBackoffBase: .milliseconds(5))
        configureClient(&clientConfiguration)
        let client = try APNsClient(configuration: clientConfiguration, providerTokenClock: clock)
        let harness = SimulatorHarness(
            simulator: simulator, client: client,
            credential: .token(teamID: teamID, keyID: keyID, privateKeyPEM: key.pemRepresentation),
            privateKeyPEM: key.pemRepresentation)
        do {
            let result = try await body(harness)
            await client.shutdown()
            try await simulator.shutdown()
            return result
        } catch {
            await client.shutdown()
            try await simulator.shutdown()
            throw error
        }
    }

    /// A well-formed alert request to `token`.
    func request(
        token: DeviceToken = SimulatorHarness.token(1), pushType: APNsPushType = .alert,
        payload: ByteBuffer = SimulatorHarness.payload
    ) -> APNsRequest {
        APNsRequest(
            credential: credential, environment: .sandbox, deviceToken: token, bundleID: Self.bundleID,
            pushType: pushType, payload: payload)
    }

    static let payload = ByteBuffer(string: #"{"aps":{"alert":"hello"}}"#)

    /// A distinct 32-byte token for every `n`.
    static func token(_ n: Int) -> DeviceToken {
        let hex = String(repeating: "0", count: 48) + String(format: "%016x", n)
        return try! DeviceToken(hex: hex)
    }

    /// A JSON payload of exactly `size` bytes.
    static func payload(size: Int) -> ByteBuffer {
        let prefix = #"{"aps":{"alert":""#
        let suffix = #""}}"#
        return ByteBuffer(string: prefix + String(repeating: "x", count: size - prefix.count - suffix.count) + suffix)
    }
}
