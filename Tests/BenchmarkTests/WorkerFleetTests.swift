import Foundation
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

/// How the fault suite reads a worker's end (``WorkerFleet/Ended``): a stop at the shutdown
/// deadline is accepted and told apart; a crash or a failure is not.
@Suite struct WorkerEndTests {
    @Test func exitZeroIsAStopAndSeventyFiveAStopAtTheDeadline() {
        let stopped = WorkerFleet.Ended(signal: false, status: 0, expectedSignal: nil, stopSeconds: 1.5)
        #expect(stopped.kind == .stopped && stopped.expected && stopped.label == "exit 0")
        let atDeadline = WorkerFleet.Ended(signal: false, status: 75, expectedSignal: nil, stopSeconds: 30.2)
        #expect(atDeadline.kind == .stoppedAtDeadline && atDeadline.expected && atDeadline.label == "exit 75 (deadline)")
    }

    @Test func theInjectedKillIsExpectedAndAnyOtherSignalIsACrash() {
        #expect(WorkerFleet.Ended(signal: true, status: SIGKILL, expectedSignal: SIGKILL).kind == .killed)
        let crash = WorkerFleet.Ended(signal: true, status: SIGILL, expectedSignal: nil)
        #expect(crash.kind == .crashed && !crash.expected && crash.label == "signal 4")
        #expect(WorkerFleet.Ended(signal: true, status: SIGKILL, expectedSignal: nil).kind == .crashed)
    }

    @Test func anyOtherExitStatusIsAFailure() {
        let failed = WorkerFleet.Ended(signal: false, status: 1, expectedSignal: SIGKILL)
        #expect(failed.kind == .failed && !failed.expected)
    }
}
