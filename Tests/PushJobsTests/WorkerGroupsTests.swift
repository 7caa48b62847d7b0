import PushJobs
import Testing

/// When a fleet's consumer groups count as settled (``WorkerGroups/areSettled(_:)``): what the
/// benchmarks and the multi-process tests wait for before they publish.
@Suite struct WorkerGroupsTests {
    let groups = WorkerGroups(prefix: "pushfleet", jobPartitions: 8, deliveryPartitions: 32, feedbackPartitions: 2)

    @Test func theGroupsAreTheRolesUnderThePrefix() {
        #expect(groups.partitions == ["pushfleet.expand": 8, "pushfleet.send": 32, "pushfleet.feedback": 2])
    }

    @Test func settledWhenEveryPartitionIsHeldAndEveryWorkerHasItsShare() {
        let shares = [
            ["pushfleet.expand": 3, "pushfleet.send": 11, "pushfleet.feedback": 1],
            ["pushfleet.expand": 3, "pushfleet.send": 11, "pushfleet.feedback": 1],
            ["pushfleet.expand": 2, "pushfleet.send": 10, "pushfleet.feedback": 0],
        ]
        #expect(groups.areSettled(shares))
    }

    @Test func notSettledWhileAPartitionMoves() {
        // Between the two rounds of a cooperative rebalance: a revoked partition is held by no one.
        let shares = [
            ["pushfleet.expand": 3, "pushfleet.send": 10, "pushfleet.feedback": 1],
            ["pushfleet.expand": 3, "pushfleet.send": 11, "pushfleet.feedback": 1],
            ["pushfleet.expand": 2, "pushfleet.send": 10, "pushfleet.feedback": 0],
        ]
        #expect(!groups.areSettled(shares))
    }

    @Test func notSettledWhileAWorkerHoldsNothingOfAGroupWithPartitionsToGoRound() {
        // The third worker joined, its first assignment not made yet: the others hold everything.
        let shares = [
            ["pushfleet.expand": 4, "pushfleet.send": 16, "pushfleet.feedback": 1],
            ["pushfleet.expand": 4, "pushfleet.send": 16, "pushfleet.feedback": 1],
            ["pushfleet.expand": 0, "pushfleet.send": 0, "pushfleet.feedback": 0],
        ]
        #expect(!groups.areSettled(shares))
    }

    @Test func notSettledBeforeAWorkerReportsAGroupOrWhenNoWorkerAnswers() {
        let shares = [
            ["pushfleet.expand": 4, "pushfleet.send": 16, "pushfleet.feedback": 1],
            ["pushfleet.expand": 4, "pushfleet.send": 16, "pushfleet.feedback": 1],
            ["pushfleet.expand": 0, "pushfleet.send": 0],
        ]
        #expect(!groups.areSettled(shares))
        #expect(!groups.areSettled([]))
    }
}
