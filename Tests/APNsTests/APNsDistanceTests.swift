import APNs
import APNsCore
import APNsSimulator
import Foundation
import NIOCore
import Synchronization
import Testing

/// The client against a simulator that behaves like Apple at a distance: a round trip on every
/// byte, 65,535-byte windows, one stream until a connection's first authenticated request.
@Suite("APNs at a distance", .serialized)
struct APNsDistanceTests {
    static let roundTrip: Duration = .milliseconds(100)

    @Test(
        "the round trip is on every answer; a pool that sizes itself opens the connections 2,000 large notifications need, and each is accepted once")
    func poolSizesItselfToTheDistance() async throws {
        try await SimulatorHarness.with(
            simulator: { $0.behaveLikeApple(roundTrip: Self.roundTrip) },
            client: {
                $0.connectionsPerPool = 32
                $0.minimumConnectionsPerPool = 1
                $0.maxConcurrentStreamsPerConnection = 1_000
            }
        ) { harness in
            // The first request opens the pool's first connection: TLS and the server's SETTINGS
            // take two round trips (TCP's own handshake is the kernel's, not delayed), the
            // request one more.
            let clock = ContinuousClock()
            var start = clock.now
            #expect(try await harness.client.send(harness.request()).isSuccess)
            #expect(clock.now - start >= Self.roundTrip * 3)
            start = clock.now
            #expect(try await harness.client.send(harness.request(token: SimulatorHarness.token(2))).isSuccess)
            #expect(clock.now - start >= Self.roundTrip, "an answer cannot come sooner than the round trip")

            // 1,500-byte payloads: 43 fit in a connection's 65,535-byte window, so 2,000 at once
            // need about 47 streams' worth of windows per 43… more than one connection can carry.
            let payload = ByteBuffer(string: #"{"aps":{"alert":""# + String(repeating: "x", count: 1_470) + #""}}"#)
            let tokens = (100..<2_100).map(SimulatorHarness.token)
            let results = Mutex<[Int: Bool]>([:])
            await harness.client.send(harness.request(payload: payload), to: tokens) { index, result in
                results.withLock { $0[index] = (try? result.get())?.isSuccess == true }
            }
            let accepted = results.withLock { $0.values.filter { $0 }.count }
            #expect(accepted == tokens.count)
            let counters = try await harness.simulator.counters()
            #expect(counters.duplicates == 0)
            #expect(counters.distinctAccepted == tokens.count + 2)
            let open = harness.client.poolStatistics().reduce(0) { $0 + $1.openConnections }
            print("at \(Self.roundTrip): \(counters.connections) connections opened, \(open) open")
            // Each connection carries at most 43 of them at once: the pool grew well past one.
            #expect(counters.connections > 10)
            #expect(counters.connections <= 32)
        }
    }

    @Test("a connection whose stream limit drops to 1 after a refusal is used again at full width after the next success")
    func streamLimitAfterARefusal() async throws {
        try await SimulatorHarness.with(
            simulator: {
                $0.behaveLikeApple(roundTrip: .milliseconds(20))
                $0.oneStreamAfterRefusal = true
                $0.devices.bad = [SimulatorHarness.token(7).hex]
            },
            client: {
                $0.connectionsPerPool = 1
                $0.maxConcurrentStreamsPerConnection = 1_000
            }
        ) { harness in
            #expect(try await harness.client.send(harness.request()).isSuccess)
            let refused = try await harness.client.send(harness.request(token: SimulatorHarness.token(7)))
            #expect(refused.status == 400)
            // The limit is 1 now: requests queue for the one stream, and the first success
            // brings the full limit back; every one of them is answered.
            let tokens = (10..<210).map(SimulatorHarness.token)
            let results = Mutex<Int>(0)
            await harness.client.send(harness.request(), to: tokens) { _, result in
                if (try? result.get())?.isSuccess == true { results.withLock { $0 += 1 } }
            }
            #expect(results.withLock { $0 } == tokens.count)
            #expect(try await harness.simulator.counters().duplicates == 0)
        }
    }
}
