import Testing

@testable import PushFleetBenchmarks

/// When the benchmark fleet's consumer groups count as settled (``WorkerFleet/isSettled(_:partitions:)``).
@Suite struct WorkerFleetTests {
    let partitions = ["pushfleet.expand": 8, "pushfleet.send": 32, "pushfleet.feedback": 2]

    @Test func settledWhenEveryPartitionIsHeldAndEveryWorkerHasItsShare() {
        let shares = [
            ["pushfleet.expand": 3, "pushfleet.send": 11, "pushfleet.feedback": 1],
            ["pushfleet.expand": 3, "pushfleet.send": 11, "pushfleet.feedback": 1],
            ["pushfleet.expand": 2, "pushfleet.send": 10, "pushfleet.feedback": 0],
        ]
        #expect(WorkerFleet.isSettled(shares, partitions: partitions))
    }

    @Test func notSettledWhileAPartitionMoves() {
        // Between the two rounds of a cooperative rebalance: a revoked partition is held by no one.
        let shares = [
            ["pushfleet.expand": 3, "pushfleet.send": 10, "pushfleet.feedback": 1],
            ["pushfleet.expand": 3, "pushfleet.send": 11, "pushfleet.feedback": 1],
            ["pushfleet.expand": 2, "pushfleet.send": 10, "pushfleet.feedback": 0],
        ]
        #expect(!WorkerFleet.isSettled(shares, partitions: partitions))
    }

    @Test func notSettledWhileAWorkerHoldsNothingOfAGroupWithPartitionsToGoRound() {
        // The third worker joined, its first assignment not made yet: the others hold everything.
        let shares = [
            ["pushfleet.expand": 4, "pushfleet.send": 16, "pushfleet.feedback": 1],
            ["pushfleet.expand": 4, "pushfleet.send": 16, "pushfleet.feedback": 1],
            ["pushfleet.expand": 0, "pushfleet.send": 0, "pushfleet.feedback": 0],
        ]
        #expect(!WorkerFleet.isSettled(shares, partitions: partitions))
    }

    @Test func notSettledBeforeAWorkerReportsAGroupOrWhenNoWorkerAnswers() {
        let shares = [
            ["pushfleet.expand": 4, "pushfleet.send": 16, "pushfleet.feedback": 1],
            ["pushfleet.expand": 4, "pushfleet.send": 16, "pushfleet.feedback": 1],
            ["pushfleet.expand": 0, "pushfleet.send": 0],
        ]
        #expect(!WorkerFleet.isSettled(shares, partitions: partitions))
        #expect(!WorkerFleet.isSettled([], partitions: partitions))
    }
}
