import Foundation
import Testing

@testable import PushFleetBenchmarks

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
