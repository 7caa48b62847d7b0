import APNsCore
import Testing

@testable import APNsSimulator

/// Latency distributions.
@Suite("Simulator latency")
struct APNsSimulatorLatencyTests {
    @Test("samples stay within their distribution")
    func samples() {
        var generator = SplitMix64(seed: 42)
        #expect(APNsSimulatorLatency.none.sampleNanoseconds(using: &generator) == nil)
        #expect(APNsSimulatorLatency.fixed(.milliseconds(3)).sampleNanoseconds(using: &generator) == 3_000_000)
        for _ in 0..<1000 {
            let uniform = APNsSimulatorLatency.uniform(.milliseconds(1), .milliseconds(2)).sampleNanoseconds(using: &generator)!
            #expect((1_000_000...2_000_000).contains(uniform))
        }
        let normal = APNsSimulatorLatency.normal(mean: .milliseconds(10), standardDeviation: .milliseconds(2))
        let samples = (0..<10_000).map { _ in Double(normal.sampleNanoseconds(using: &generator)!) }
        let mean = samples.reduce(0, +) / Double(samples.count)
        let variance = samples.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(samples.count)
        #expect(abs(mean - 10_000_000) < 200_000)
        #expect(abs(variance.squareRoot() - 2_000_000) < 200_000)
    }
}
