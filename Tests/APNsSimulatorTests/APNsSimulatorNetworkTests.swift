import Testing

@testable import APNsSimulator

/// When bytes arrive across the simulator's network (``APNsSimulatorDelayLine``).
@Suite("Simulator network: delay, jitter, bandwidth")
struct APNsSimulatorNetworkTests {
    @Test("every chunk arrives half the round trip after it was sent")
    func halfTheRoundTrip() {
        var line = APNsSimulatorDelayLine(network: APNsSimulatorNetwork(roundTrip: .milliseconds(200)))
        #expect(line.arrival(ofBytes: 100, sentAt: 0, jitter: 0.7) == 100_000_000)
        #expect(line.arrival(ofBytes: 100, sentAt: 5_000_000, jitter: 0.2) == 105_000_000)
    }

    @Test("jitter delays a chunk by up to its bound, but never lets it overtake the one before")
    func jitterKeepsOrder() {
        var line = APNsSimulatorDelayLine(network: APNsSimulatorNetwork(roundTrip: .milliseconds(100), jitter: .milliseconds(20)))
        let first = line.arrival(ofBytes: 10, sentAt: 0, jitter: 1)  // 50 + 20 ms
        let second = line.arrival(ofBytes: 10, sentAt: 1_000_000, jitter: 0)  // 51 ms, held behind the first
        let third = line.arrival(ofBytes: 10, sentAt: 40_000_000, jitter: 0.5)  // 40 + 50 + 10 ms
        #expect(first == 70_000_000)
        #expect(second == first)
        #expect(third == 100_000_000)
    }

    @Test("a bandwidth cap queues chunks behind what the link still carries")
    func bandwidth() {
        // 1,000 bytes a second: a 500-byte chunk takes 0.5 s on the link, then the one-way delay.
        var line = APNsSimulatorDelayLine(network: APNsSimulatorNetwork(roundTrip: .milliseconds(20), bytesPerSecond: 1_000))
        #expect(line.arrival(ofBytes: 500, sentAt: 0, jitter: 0) == 510_000_000)
        #expect(line.arrival(ofBytes: 500, sentAt: 0, jitter: 0) == 1_010_000_000)
        #expect(line.arrival(ofBytes: 100, sentAt: 2_000_000_000, jitter: 0) == 2_110_000_000)
    }

    @Test("loopback delays nothing")
    func loopback() {
        #expect(APNsSimulatorNetwork.loopback.isLoopback)
        #expect(!APNsSimulatorNetwork(roundTrip: .milliseconds(1)).isLoopback)
        var line = APNsSimulatorDelayLine(network: .loopback)
        #expect(line.arrival(ofBytes: 1_000, sentAt: 42, jitter: 1) == 42)
    }
}
