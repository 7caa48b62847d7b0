import PushJobs
import Testing

/// When a fleet's consumer groups count as settled (``WorkerGroups/areSettled(_:)``,
/// ``SettledGroupsWatch``): what the benchmarks and the multi-process tests wait for before they
/// publish, and before they stop a worker.
@Suite struct WorkerGroupsTests {
    let groups = WorkerGroups(prefix: "pushfleet", jobPartitions: 8, deliveryPartitions: 32, feedbackPartitions: 2)

    /// Workers holding `shares`, each of their members steady unless its group is in
    /// `rebalancing` (for that worker).
    func views(_ shares: [[String: Int]], rebalancing: [Int: String] = [:]) -> [WorkerGroupView] {
        shares.enumerated().map { index, share in
            var view = WorkerGroupView(assigned: share, rebalancing: share.mapValues { _ in false })
            if let group = rebalancing[index] { view.rebalancing[group] = true }
            return view
        }
    }

    let settled = [
        ["pushfleet.expand": 3, "pushfleet.send": 11, "pushfleet.feedback": 1],
        ["pushfleet.expand": 3, "pushfleet.send": 11, "pushfleet.feedback": 1],
        ["pushfleet.expand": 2, "pushfleet.send": 10, "pushfleet.feedback": 0],
    ]

    @Test func theGroupsAreTheRolesUnderThePrefix() {
        #expect(groups.partitions == ["pushfleet.expand": 8, "pushfleet.send": 32, "pushfleet.feedback": 2])
    }

    @Test func settledWhenEveryPartitionIsHeldAndEveryWorkerHasItsShare() {
        #expect(groups.areSettled(views(settled)))
    }

    @Test func notSettledWhileAPartitionMoves() {
        // Between the two rounds of a cooperative rebalance: a revoked partition is held by no one.
        let shares = [
            ["pushfleet.expand": 3, "pushfleet.send": 10, "pushfleet.feedback": 1],
            ["pushfleet.expand": 3, "pushfleet.send": 11, "pushfleet.feedback": 1],
            ["pushfleet.expand": 2, "pushfleet.send": 10, "pushfleet.feedback": 0],
        ]
        #expect(!groups.areSettled(views(shares)))
    }

    @Test func notSettledWhileAWorkerHoldsNothingOfAGroupWithPartitionsToGoRound() {
        // The third worker joined, its first assignment not made yet: the others hold everything.
        let shares = [
            ["pushfleet.expand": 4, "pushfleet.send": 16, "pushfleet.feedback": 1],
            ["pushfleet.expand": 4, "pushfleet.send": 16, "pushfleet.feedback": 1],
            ["pushfleet.expand": 0, "pushfleet.send": 0, "pushfleet.feedback": 0],
        ]
        #expect(!groups.areSettled(views(shares)))
    }

    @Test func notSettledBeforeAWorkerReportsAGroupOrWhenNoWorkerAnswers() {
        let shares = [
            ["pushfleet.expand": 4, "pushfleet.send": 16, "pushfleet.feedback": 1],
            ["pushfleet.expand": 4, "pushfleet.send": 16, "pushfleet.feedback": 1],
            ["pushfleet.expand": 0, "pushfleet.send": 0],
        ]
        #expect(!groups.areSettled(views(shares)))
        #expect(!groups.areSettled([]))
    }

    @Test func notSettledWhileAMemberIsInARebalanceThoughTheSharesAddUp() {
        // Cooperative rebalancing: the leader has its new share, the other member still holds its
        // old one while it joins the new generation (seen on a Tansu coordinator, 2026-12-05).
        #expect(!groups.areSettled(views(settled, rebalancing: [1: "pushfleet.feedback"])))
        // A worker whose group state has not been reported yet.
        var unreported = views(settled)
        unreported[2].rebalancing["pushfleet.send"] = nil
        #expect(!groups.areSettled(unreported))
    }

    @Test func theWatchWaitsForTheSameSettledViewsOverItsSpan() {
        var watch = SettledGroupsWatch(groups: groups, span: .seconds(2))
        func sample(_ views: [WorkerGroupView], at instant: ContinuousClock.Instant) -> Bool { watch.observe(views, at: instant) }
        let start = ContinuousClock.now
        #expect(!sample(views(settled), at: start))
        #expect(!sample(views(settled), at: start + .milliseconds(1_999)))
        #expect(sample(views(settled), at: start + .seconds(2)))
    }

    @Test func theWatchStartsAgainWhenTheViewsChangeOrStopBeingSettled() {
        var watch = SettledGroupsWatch(groups: groups, span: .seconds(2))
        func sample(_ views: [WorkerGroupView], at instant: ContinuousClock.Instant) -> Bool { watch.observe(views, at: instant) }
        let start = ContinuousClock.now
        #expect(!sample(views(settled), at: start))
        // A member reads in a rebalance for a moment: the span starts again after it.
        #expect(!sample(views(settled, rebalancing: [0: "pushfleet.send"]), at: start + .seconds(1)))
        #expect(!sample(views(settled), at: start + .milliseconds(1_500)))
        #expect(!sample(views(settled), at: start + .seconds(3)))
        #expect(sample(views(settled), at: start + .milliseconds(3_500)))

        // Settled again with other shares (a partition moved between two samples): starts again.
        var moved = settled
        moved[0]["pushfleet.send"] = 10
        moved[2]["pushfleet.send"] = 11
        #expect(!sample(views(moved), at: start + .seconds(4)))
        #expect(!sample(views(moved), at: start + .milliseconds(5_999)))
        #expect(sample(views(moved), at: start + .seconds(6)))
    }

    @Test func afterAMemberDiedTheWatchDeclaresNothingBeforeItsGroupsNoticed() {
        let start = ContinuousClock.now
        var watch = SettledGroupsWatch(groups: groups, span: .seconds(2), notBefore: start + .seconds(10))
        func sample(_ views: [WorkerGroupView], at instant: ContinuousClock.Instant) -> Bool { watch.observe(views, at: instant) }
        // Settled all along, but the span counts from `notBefore` only.
        #expect(!sample(views(settled), at: start))
        #expect(!sample(views(settled), at: start + .seconds(9)))
        #expect(!sample(views(settled), at: start + .seconds(10)))
        #expect(!sample(views(settled), at: start + .milliseconds(11_999)))
        #expect(sample(views(settled), at: start + .seconds(12)))
    }

    @Test func theDefaultSpanIsTwoGroupStateReports() {
        #expect(SettledGroupsWatch(groups: groups).span == WorkerGroups.groupStateInterval * 2)
    }
}
