import APNs
import APNsCore
import APNsSimulator
import Foundation
import HTTP2Frames
import NIOCore
import NIOPosix
import Synchronization
import Testing

@Suite("The binary interface's frames and send window")
struct APNsBinaryWireTests {
    @Test("a notification frame, an error response and a feedback tuple read back as written")
    func frames() throws {
        var bytes = ByteBuffer()
        let token = SimulatorHarness.token(7).bytes
        APNsBinaryFrame.writeNotification(
            token: token, payload: ByteBuffer(string: #"{"aps":{}}"#), identifier: 0x0102_0304, expiration: 1_700_000_000, priority: 5,
            into: &bytes)
        var half = bytes.getSlice(at: 0, length: 20)!
        #expect(APNsBinaryFrame.readNotification(from: &half) == .incomplete)
        guard case .notification(let frame) = APNsBinaryFrame.readNotification(from: &bytes) else {
            Issue.record("no frame")
            return
        }
        #expect(frame.token == token && frame.identifier == 0x0102_0304 && frame.expiration == 1_700_000_000 && frame.priority == 5)
        #expect(frame.payload == Array(#"{"aps":{}}"#.utf8) && frame.unknownItem == nil)
        #expect(bytes.readableBytes == 0)
        var junk = ByteBuffer(bytes: [9, 0, 0])
        #expect(APNsBinaryFrame.readNotification(from: &junk) == .malformed(command: 9))

        var answer = ByteBuffer()
        APNsBinaryFrame.writeErrorResponse(status: .invalidToken, identifier: 42, into: &answer)
        #expect(Array(answer.readableBytesView) == [8, 8, 0, 0, 0, 42])
        let read = APNsBinaryFrame.readErrorResponse(from: &answer)
        #expect(read?.status == .invalidToken && read?.identifier == 42)

        var tuples = ByteBuffer()
        APNsBinaryFrame.writeFeedbackTuple(time: 1_600_000_000, token: token, into: &tuples)
        let tuple = try #require(APNsBinaryFrame.readFeedbackTuple(from: &tuples))
        #expect(tuple.time == 1_600_000_000 && tuple.token == token)
        #expect(APNsBinaryFrame.readFeedbackTuple(from: &tuples) == nil)
    }

    @Test("an error response: before it taken, it refused, after it written again; Shutdown names the last taken")
    func errorResponses() {
        let start = ContinuousClock.now
        func window() -> APNsBinarySendWindow<String> {
            var window = APNsBinarySendWindow<String>()
            for (offset, name) in ["a", "b", "c", "d"].enumerated() {
                window.written(name, identifier: UInt32(10 + offset), at: start)
            }
            return window
        }
        var refused = window()
        let verdict = refused.errorResponse(status: .invalidToken, identifier: 11)
        #expect(verdict.taken == ["a"] && verdict.refused == "b" && verdict.writeAgain == ["c", "d"] && refused.count == 0)
        var shutdown = window()
        let closing = shutdown.errorResponse(status: .shutdown, identifier: 11)
        #expect(closing.taken == ["a", "b"] && closing.refused == nil && closing.writeAgain == ["c", "d"])
        var unknown = window()
        #expect(unknown.errorResponse(status: .invalidToken, identifier: 99).writeAgain == ["a", "b", "c", "d"])
        var closed = window()
        #expect(closed.closed() == ["a", "b", "c", "d"])
        var quiet = window()
        quiet.written("e", identifier: 14, at: start + .seconds(1))
        #expect(quiet.settle(writtenBefore: start + .milliseconds(500)) == ["a", "b", "c", "d"] && quiet.count == 1)
    }

    @Test("statuses read as the HTTP/2 answers the pipeline settles alike")
    func statuses() {
        #expect(APNsClient.binaryResponse(.noErrors, writes: 1).isSuccess)
        #expect(APNsClient.binaryResponse(.invalidToken, writes: 1).responseClass == .tokenRejected)
        #expect(APNsClient.binaryResponse(.invalidPayloadSize, writes: 1).responseClass == .misconfiguration)
        #expect(APNsClient.binaryResponse(.processingError, writes: 2).responseClass == .retryable)
        #expect(APNsClient.binaryResponse(.processingError, writes: 2).attempts == 2)
    }
}

@Suite("The binary interface against the simulator", .serialized)
struct APNsBinaryClientTests {
    /// A simulator with its binary gateway and feedback service, and a client with a certificate for them.
    static func with(
        _ configure: (inout APNsSimulatorConfiguration) -> Void = { _ in },
        slice: Int = 1000,
        _ body: (APNsSimulator, APNsClient, APNsRequest) async throws -> Void
    ) async throws {
        var configuration = APNsSimulatorConfiguration(threads: 2, bundleIDs: [SimulatorHarness.bundleID])
        configuration.binaryPort = 0
        configuration.feedbackPort = 0
        configure(&configuration)
        let simulator = try APNsSimulator(configuration: configuration)
        try await simulator.start()
        var clientConfiguration = APNsClientConfiguration(trustRoots: .pem(simulator.tlsIdentity.certificateAuthorityPEM))
        clientConfiguration.binaryGatewayEndpoints[.sandbox] = .init(host: "127.0.0.1", port: try #require(simulator.binaryPort))
        clientConfiguration.feedbackServiceEndpoints[.sandbox] = .init(host: "127.0.0.1", port: try #require(simulator.feedbackPort))
        clientConfiguration.binaryQuietPeriod = .milliseconds(200)
        clientConfiguration.binarySliceFrames = slice
        let client = try APNsClient(configuration: clientConfiguration)
        let issued = try simulator.tlsIdentity.issueClientCertificate(topic: SimulatorHarness.bundleID, environmentName: "sandbox")
        let request = APNsRequest(
            credential: .certificate(name: "binary", certificateChainPEM: issued.certificatePEM, privateKeyPEM: issued.privateKeyPEM),
            environment: .sandbox, deviceToken: SimulatorHarness.token(0), bundleID: SimulatorHarness.bundleID, payload: SimulatorHarness.payload)
        do {
            try await body(simulator, client, request)
        } catch {
            await client.shutdown()
            try await simulator.shutdown()
            throw error
        }
        await client.shutdown()
        try await simulator.shutdown()
    }

    final class Results: Sendable {
        let byIndex = Mutex<[Int: [Result<APNsResponse, APNsError>]]>([:])
        func add(_ index: Int, _ result: Result<APNsResponse, APNsError>) { byIndex.withLock { $0[index, default: []].append(result) } }
        var all: [Int: [Result<APNsResponse, APNsError>]] { byIndex.withLock { $0 } }
    }

    @Test("5,000 frames with 2% invalid tokens spread through them: each valid one taken once, each invalid one answered, none lost")
    func invalidTokens() async throws {
        let tokens = (0..<5_000).map(SimulatorHarness.token)
        let bad = Set(stride(from: 37, to: tokens.count, by: 50).map { tokens[$0].hex })
        try await Self.with({ $0.devices.bad = bad }) { simulator, client, request in
            let results = Results()
            await client.sendOverBinaryInterface(request, to: tokens) { results.add($0, $1) }
            let all = results.all
            #expect(all.count == tokens.count && all.values.allSatisfy { $0.count == 1 }, "one result per token")
            for (index, outcomes) in all {
                let response = try #require(try? outcomes[0].get())
                if bad.contains(tokens[index].hex) {
                    #expect(response.reason == .badDeviceToken, "\(index)")
                } else {
                    #expect(response.isSuccess, "\(index)")
                }
            }
            let counters = try await simulator.counters()
            #expect(counters.accepted == tokens.count - bad.count && counters.duplicates == 0)
            #expect(counters.acceptedPerToken.count == tokens.count - bad.count)
            #expect(counters.rejections == ["InvalidToken": bad.count])
        }
    }

    @Test("a gateway shutting down every 700 frames: every frame taken once, on new connections")
    func shutdowns() async throws {
        let tokens = (0..<3_000).map(SimulatorHarness.token)
        try await Self.with({ $0.faults.binaryShutdownEveryFrames = 700 }) { simulator, client, request in
            let results = Results()
            await client.sendOverBinaryInterface(request, to: tokens) { results.add($0, $1) }
            #expect(results.all.values.allSatisfy { $0.count == 1 && ((try? $0[0].get())?.isSuccess ?? false) })
            let counters = try await simulator.counters()
            #expect(counters.accepted == tokens.count && counters.duplicates == 0 && counters.connections >= 5)
        }
    }

    @Test("connections closed without an answer: every frame written again until taken; none lost")
    func droppedConnections() async throws {
        let tokens = (0..<2_000).map(SimulatorHarness.token)
        try await Self.with({ $0.faults.connectionResetEveryStreams = 900 }, slice: 400) { simulator, client, request in
            let results = Results()
            await client.sendOverBinaryInterface(request, to: tokens) { results.add($0, $1) }
            #expect(results.all.count == tokens.count)
            #expect(results.all.values.allSatisfy { $0.count == 1 && ((try? $0[0].get())?.isSuccess ?? false) })
            let counters = try await simulator.counters()
            #expect(counters.acceptedPerToken.count == tokens.count, "every token reached")
        }
    }

    @Test("the feedback service lists the uninstalled tokens with their time; a signing key cannot use the binary interface")
    func feedbackAndCredentials() async throws {
        let gone = [SimulatorHarness.token(1): Int64(1_700_000_000_000), SimulatorHarness.token(2): 1_700_000_500_000]
        try await Self.with({ $0.devices.unregistered = Dictionary(uniqueKeysWithValues: gone.map { ($0.key.hex, $0.value) }) }) {
            simulator, client, request in
            let tuples = try await client.readFeedbackService(credential: request.credential, environment: .sandbox)
            #expect(Dictionary(uniqueKeysWithValues: tuples.map { ($0.token, $0.time * 1000) }) == gone)

            var keyed = request
            keyed.credential = .token(teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: "unused")
            let results = Results()
            await client.sendOverBinaryInterface(keyed, to: [SimulatorHarness.token(3)]) { results.add($0, $1) }
            guard case .failure(let error) = results.all[0]?.first else {
                Issue.record("a signing key was accepted")
                return
            }
            #expect(error.code == .invalidCredential)
        }
    }
}
