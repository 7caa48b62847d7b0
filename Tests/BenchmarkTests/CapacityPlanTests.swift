import Testing

@testable import PushFleetBenchmarks

/// How the capacity benchmark sizes its stack for an audience: registry shards that keep every
/// bucket compact, and `push.deliveries` partitions that hold what the expansion publishes ahead
/// of the sending in the mock cluster (5 MB each).
@Suite struct CapacityPlanTests {
    @Test func shardsKeepBucketsAt64DevicesOrFewer() {
        #expect(PipelineBenchmarkCommand.compactShards(devices: 100_000) == 16)
        #expect(PipelineBenchmarkCommand.compactShards(devices: 1_000_000) == 16)
        #expect(PipelineBenchmarkCommand.compactShards(devices: 1_048_577) == 32)
        #expect(PipelineBenchmarkCommand.compactShards(devices: 10_000_000) == 256)
        #expect(PipelineBenchmarkCommand.compactShards(devices: 100_000_000) == 2_048)
        #expect(PipelineBenchmarkCommand.compactShards(devices: 1_000_000_000) == 2_048, "at most 2,048")
    }

    @Test func deliveryPartitionsHoldTheWholeAudienceAhead() {
        #expect(PipelineBenchmarkCommand.deliveryPartitions(devices: 100_000) == 64)
        #expect(PipelineBenchmarkCommand.deliveryPartitions(devices: 1_000_000) == 64)
        #expect(PipelineBenchmarkCommand.deliveryPartitions(devices: 10_000_000) == 256)
        #expect(PipelineBenchmarkCommand.deliveryPartitions(devices: 100_000_000) == 2_048)
        for devices in [3_000_000, 10_000_000, 50_000_000, 100_000_000] {
            // 5 MB per partition, 73 bytes per notification in a chunk.
            let retained = Int(PipelineBenchmarkCommand.deliveryPartitions(devices: devices)) * 5 * 1_048_576 / 73
            #expect(retained >= devices, "\(devices)")
        }
    }
}
