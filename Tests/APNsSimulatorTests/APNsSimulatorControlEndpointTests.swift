import APNsSimulator
import Foundation
import NIOCore
import NIOPosix
import Testing

/// The HTTP/1.1 control endpoint and the simulator's lifecycle.
@Suite("Simulator control endpoint", .serialized)
struct APNsSimulatorControlEndpointTests {
    @Test("GET /counters answers JSON, GET /accepted the count, POST /reset zeroes, GET /ca.pem answers the CA")
    func control() async throws {
        let simulator = try APNsSimulator(configuration: APNsSimulatorConfiguration(controlPort: 0, threads: 1))
        try await simulator.start()
        let port = try #require(simulator.controlPort)
        let counters = try await Self.request("GET", "/counters", port: port)
        let decoded = try JSONDecoder().decode(APNsSimulatorCounters.self, from: Data(counters.utf8))
        #expect(decoded == APNsSimulatorCounters())
        #expect(try await Self.request("GET", "/accepted", port: port) == String(try await simulator.acceptedCount()))
        #expect(try await Self.request("POST", "/reset", port: port) == "{}")
        #expect(try await Self.request("GET", "/ca.pem", port: port) == simulator.tlsIdentity.certificateAuthorityPEM)
        try await simulator.shutdown()
        await #expect(throws: APNsSimulatorError.self) { try await simulator.counters() }
    }

    @Test("the generated identity is a CA and a server certificate for localhost and 127.0.0.1")
    func identity() throws {
        let identity = try APNsSimulatorTLSIdentity.generate()
        #expect(identity.certificateAuthorityPEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(identity.serverCertificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(identity.serverPrivateKeyPEM.contains("PRIVATE KEY"))
        #expect(identity.certificateAuthorityPEM != identity.serverCertificatePEM)
    }

    /// A one-shot HTTP/1.1 exchange over a plain socket; returns the body.
    static func request(_ method: String, _ path: String, port: Int) async throws -> String {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(
                ByteBuffer(string: "\(method) \(path) HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"))
            var response = ""
            for try await chunk in inbound {
                response += String(buffer: chunk)
            }
            return String(response.split(separator: "\r\n\r\n", maxSplits: 1).last ?? "")
        }
    }
}
