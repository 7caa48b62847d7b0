import APNsCore
import APNsSimulator
import Crypto
import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import APNs

/// Connections, streams and failures of the client against the simulator.
@Suite("APNs connection behaviour", .serialized)
struct APNsConnectionBehaviourTests {
    @Test("GOAWAY: refused streams go to another connection, none fails, none is sent twice")
    func goAway() async throws {
        try await SimulatorHarness.with(
            simulator: { $0.faults.goAwayEveryStreams = 200 },
            client: { $0.connectionsPerPool = 2 }
        ) { harness in
            let failures = try await APNsResilienceTests.sendAll(count: 2_000, window: 200, harness: harness)
            #expect(failures.count == 0, "first failures: \(failures.prefix(3))")
            let counters = try await harness.simulator.counters()
            #expect(counters.goAways >= 2_000 / 200)
            #expect(counters.accepted == 2_000)
            #expect(counters.duplicates == 0)
        }
    }

    @Test("error answers beyond the first 64 KiB of a connection keep arriving")
    func connectionReceiveWindow() async throws {
        // 3,000 answers of 51 bytes ({"reason":"Unregistered","timestamp":…}) on one connection:
        // more than twice the 65,535 bytes HTTP/2 allows before the client's first WINDOW_UPDATE.
        let count = 3_000
        try await SimulatorHarness.with(
            simulator: {
                $0.devices.unregistered = Dictionary(
                    uniqueKeysWithValues: (0..<count).map { (SimulatorHarness.token($0).hex, 1_700_000_000_000) })
            },
            client: {
                $0.requestTimeout = .seconds(10)
                $0.maxAttempts = 1
            }
        ) { harness in
            let failures = try await APNsResilienceTests.sendAll(count: count, window: 100, harness: harness)
            let unexpected = failures.filter { $0 != "410 Unregistered" }
            #expect(failures.count == count)
            #expect(unexpected.count == 0, "first: \(unexpected.prefix(3))")
            let counters = try await harness.simulator.counters()
            #expect(counters.connections == 1)
            #expect(counters.rejections["Unregistered"] == count)
        }
    }

    @Test("a request with a valid token lifts Apple's one-stream limit even when its device is refused")
    func streamLimitLiftedByARefusedDevice() async throws {
        // Apple allows one stream "until you post a request with a valid authentication token";
        // a 410 carries one. A connection that only ever met refused devices would otherwise send
        // one request per round trip.
        let unregistered = SimulatorHarness.token(0)
        let count = 20
        try await SimulatorHarness.with(
            simulator: { $0.devices.unregistered = [unregistered.hex: 1_700_000_000_000] },
            client: {
                $0.connectionsPerPool = 1
                $0.requestTimeout = .seconds(2)
                $0.maxAttempts = 1
            }
        ) { harness in
            #expect(try await harness.client.send(harness.request(token: unregistered)).status == 410)
            // From now on no request is answered: those that reach the simulator before they time
            // out are the ones the connection carried at once (one, or two around a timeout, at a
            // limit of one stream).
            try await harness.simulator.setFaults(APNsSimulatorFaults(stallRate: 1))
            await withTaskGroup(of: Void.self) { group in
                for index in 1...count {
                    let request = harness.request(token: SimulatorHarness.token(index))
                    group.addTask { _ = try? await harness.client.send(request) }
                }
            }
            let counters = try await harness.simulator.counters()
            #expect(counters.connections == 1)
            #expect(counters.stalled == count)
        }
    }

    @Test("a connection reset fails in-flight requests as retryable; answered ones stay answered")
    func reset() async throws {
        try await SimulatorHarness.with(
            simulator: { $0.faults.connectionResetEveryStreams = 100 }
        ) { harness in
            let failures = try await APNsResilienceTests.sendAll(count: 1_000, window: 100, harness: harness)
            let counters = try await harness.simulator.counters()
            #expect(counters.connectionResets >= 5)
            #expect(!failures.isEmpty)
            #expect(failures.allSatisfy { $0.contains("connectionLost") })
            #expect(counters.accepted == 1_000 - failures.count)
            #expect(counters.duplicates == 0)
        }
    }

    @Test("a request the server never answers times out as retryable")
    func stall() async throws {
        try await SimulatorHarness.with(
            simulator: { $0.faults.stallRate = 1 },
            client: { $0.requestTimeout = .milliseconds(300) }
        ) { harness in
            let error = await #expect(throws: APNsError.self) { try await harness.client.send(harness.request()) }
            #expect(error?.code == .timeout)
            #expect(error?.isRetryable == true)
            let counters = try await harness.simulator.counters()
            #expect(counters.stalled == 1)
        }
    }

    @Test("a connection that goes away while its answers wait out the simulator's latency: the answers are dropped, the simulator serves on")
    func connectionGoneBeforeItsAnswers() async throws {
        // Every answer waits 2 s: long enough that the client's close reaches the simulator before
        // the first answer comes due, even on a loaded machine.
        try await SimulatorHarness.with(simulator: { $0.latency = .fixed(.seconds(2)) }) { harness in
            let early = try APNsClient(
                configuration: APNsClientConfiguration(
                    endpointOverride: .init(host: "127.0.0.1", port: harness.simulator.port),
                    trustRoots: .pem(harness.simulator.tlsIdentity.certificateAuthorityPEM), connectionsPerPool: 1))
            let request = harness.request()
            let pending = Task { try await early.send(request) }
            // The request reaches the simulator, whose answer waits 2 s; the client leaves first.
            while try await harness.simulator.counters().requests == 0 {
                try await Task.sleep(for: .milliseconds(10))
            }
            await early.shutdown()
            _ = try? await pending.value
            // The second answer waits out the same latency after the first one's: by then the
            // first came due on a connection that is gone, and the simulator serves on.
            let response = try await harness.client.send(harness.request(token: SimulatorHarness.token(2)))
            #expect(response.status == 200)
            let counters = try await harness.simulator.counters()
            #expect(counters.requests == 2 && counters.accepted == 1)
        }
    }

    @Test("PING keepalive: an idle connection is pinged; one whose peer went silent is dropped and replaced")
    func pingKeepalive() async throws {
        try await SimulatorHarness.with(
            simulator: { $0.faults.unresponsiveAfterStreams = 1 },
            client: {
                $0.pingInterval = .milliseconds(100)
                $0.pingTimeout = .milliseconds(300)
                $0.maxAttempts = 1
            }
        ) { harness in
            #expect(try await harness.client.send(harness.request()).status == 200)
            let deadline = ContinuousClock.now + .seconds(10)
            while try await harness.simulator.counters().pings < 2, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(try await harness.simulator.counters().pings >= 2)

            // The second stream finds the peer silent. The request timeout is a minute: the
            // unanswered PING is what closes the connection, so the request fails as a lost
            // connection (retryable), not as a timeout.
            let error = await #expect(throws: APNsError.self) { try await harness.client.send(harness.request()) }
            #expect(error?.code == .connectionLost)
            #expect(error?.isRetryable == true)

            // A new connection carries the next notification.
            #expect(try await harness.client.send(harness.request()).status == 200)
            let counters = try await harness.simulator.counters()
            #expect(counters.unresponsiveConnections == 1)
            #expect(counters.connections == 2)
        }
    }

    @Test("a request timeout makes the connection prove it is alive: a silent peer is replaced without waiting for the keepalive")
    func timeoutTriggersPing() async throws {
        try await SimulatorHarness.with(
            simulator: { $0.faults.unresponsiveAfterStreams = 1 },
            client: {
                $0.pingInterval = .seconds(3600)
                $0.pingTimeout = .milliseconds(500)
                // The first request's time includes opening the connection (a TLS handshake),
                // which took over 200 ms once in a full test run on 2 busy cores: a second leaves
                // room for it and still ends the silent stream long before the keepalive.
                $0.requestTimeout = .seconds(1)
                $0.maxAttempts = 1
            }
        ) { harness in
            #expect(try await harness.client.send(harness.request()).status == 200)
            // The second stream finds the peer silent and times out; its PING goes unanswered.
            let timedOut = await #expect(throws: APNsError.self) { try await harness.client.send(harness.request()) }
            #expect(timedOut?.code == .timeout)
            // No request goes to the silent connection while its PING is out; the unanswered
            // PING retires it and opens the replacement.
            let deadline = ContinuousClock.now + .seconds(10)
            while try await harness.simulator.counters().connections < 2, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            // A new connection carries the next notification; the keepalive (an hour) had no part.
            #expect(try await harness.client.send(harness.request()).status == 200)
            let counters = try await harness.simulator.counters()
            #expect(counters.unresponsiveConnections == 1)
            #expect(counters.connections == 2)
        }
    }

    @Test("GOAWAY debug data: APNs's reason is read, anything else is ignored")
    func goAwayReason() {
        #expect(APNsConnectionStateMachine<Int>.reason(inDebugData: ByteBuffer(string: #"{"reason":"IdleTimeout"}"#)) == "IdleTimeout")
        #expect(APNsConnectionStateMachine<Int>.reason(inDebugData: ByteBuffer(string: "shutting down")) == nil)
        #expect(APNsConnectionStateMachine<Int>.reason(inDebugData: ByteBuffer()) == nil)
    }

    @Test("an aborted TLS handshake is a retryable connect failure")
    func handshakeFailure() async throws {
        try await SimulatorHarness.with(simulator: { $0.faults.tlsHandshakeFailureRate = 1 }) { harness in
            let error = await #expect(throws: APNsError.self) { try await harness.client.send(harness.request()) }
            #expect(error?.code == .connectFailed)
            #expect(error?.isRetryable == true)
        }
    }

    @Test("a server certificate without the connected name is refused")
    func hostnameVerification() async throws {
        try await SimulatorHarness.with(
            simulator: { $0.tls = try APNsSimulatorTLSIdentity.generate(dnsNames: ["apns.example"], ipv4Addresses: []) }
        ) { harness in
            let error = await #expect(throws: APNsError.self) { try await harness.client.send(harness.request()) }
            #expect(error?.code == .connectFailed)
            let counters = try await harness.simulator.counters()
            #expect(counters.requests == 0)
        }
    }

    @Test("a server certificate from an untrusted CA is refused")
    func untrustedCertificateAuthority() async throws {
        let stranger = try APNsSimulatorTLSIdentity.generate()
        try await SimulatorHarness.with(
            client: { $0.trustRoots = .pem(stranger.certificateAuthorityPEM) }
        ) { harness in
            let error = await #expect(throws: APNsError.self) { try await harness.client.send(harness.request()) }
            #expect(error?.code == .connectFailed)
        }
    }

    @Test("callers beyond the waiter bound are turned away instead of queued")
    func backpressure() async throws {
        try await SimulatorHarness.with(
            simulator: {
                $0.maxConcurrentStreams = 1
                $0.latency = .fixed(.milliseconds(500))
            },
            client: { $0.maxWaitersPerPool = 5 }
        ) { harness in
            #expect(try await harness.client.send(harness.request()).status == 200)
            let failures = try await APNsResilienceTests.sendAll(count: 20, window: 20, harness: harness)
            #expect(failures.count >= 14)
            #expect(failures.allSatisfy { $0.contains("tooManyWaiters") })
        }
    }

    @Test("a caller waiting for a stream gives up at the request timeout")
    func waiterTimeout() async throws {
        // A server that accepts TCP and never answers: no connection becomes ready, so the
        // caller waits for a stream until its timeout (the connect timeout is far longer).
        let silent = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { $0.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { silent.close(promise: nil) }
        let port = try #require(silent.localAddress?.port)
        try await SimulatorHarness.with(
            client: {
                $0.endpointOverride = .init(host: "127.0.0.1", port: port)
                $0.connectTimeout = .seconds(60)
                $0.requestTimeout = .milliseconds(200)
                $0.maxAttempts = 1
            }
        ) { harness in
            let error = await #expect(throws: APNsError.self) { try await harness.client.send(harness.request()) }
            #expect(error?.code == .timeout)
            #expect(error?.isRetryable == true)
        }
    }

    @Test("one pool per credential and environment")
    func poolsPerCredential() async throws {
        try await SimulatorHarness.with(
            simulator: {
                $0.providerKeys.append(
                    try APNsSimulatorProviderKey(keyID: "SECONDKEY1", teamID: "TEAM999999", pem: Self.secondKeyPEM))
            },
            client: { $0.connectionsPerPool = 2 }
        ) { harness in
            var second = harness.request()
            second.credential = .token(teamID: "TEAM999999", keyID: "SECONDKEY1", privateKeyPEM: Self.secondKeyPEM)
            var production = harness.request()
            production.environment = .production
            for request in [harness.request(), second, production, harness.request(), second] {
                #expect(try await harness.client.send(request).status == 200)
            }
            // Three pools of two connections (the override sends production to the simulator too).
            let deadline = ContinuousClock.now + .seconds(10)
            while try await harness.simulator.counters().connections < 6, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(try await harness.simulator.counters().connections == 6)
        }
    }

    static let secondKeyPEM = P256.Signing.PrivateKey().pemRepresentation
}
