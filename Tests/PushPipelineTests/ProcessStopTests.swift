import PushPipeline
import Testing

/// How a long-running process stops (``ProcessStop``): signal, deadline, allowance, and the
/// exit status each path ends with.
@Suite struct ProcessStopTests {
    @Test func aStopWithinTheDeadlineExitsZero() {
        var stop = ProcessStop(deadline: .seconds(30), allowance: .seconds(5))
        #expect(stop.signalReceived() == .shutDownGracefully(deadline: .seconds(30)))
        #expect(stop.servicesFinished() == .stopped)
        #expect(stop.phase == .exiting(.stopped))
        // The deadline's timer fires after the process finished: nothing happens.
        #expect(stop.deadlinePassed() == .none)
        #expect(stop.allowancePassed() == .none)
    }

    @Test func laterSignalsChangeNothing() {
        var stop = ProcessStop(deadline: .seconds(30))
        _ = stop.signalReceived()
        #expect(stop.signalReceived() == .none)
        #expect(stop.phase == .draining)
    }

    @Test func atTheDeadlineTheWorkIsCancelledAndTheProcessExitsSeventyFive() {
        var stop = ProcessStop(deadline: .seconds(2), allowance: .seconds(5))
        _ = stop.signalReceived()
        #expect(stop.deadlinePassed() == .cancel(allowance: .seconds(5)))
        #expect(stop.phase == .cancelling)
        #expect(stop.servicesFinished() == .stoppedAtDeadline)
        #expect(ProcessStop.ExitStatus.stoppedAtDeadline.code == 75)
        #expect(stop.allowancePassed() == .none)
    }

    @Test func workThatDoesNotGiveWayWithinTheAllowanceEndsTheProcessWithoutIt() {
        var stop = ProcessStop(deadline: .seconds(2), allowance: .seconds(5))
        _ = stop.signalReceived()
        _ = stop.deadlinePassed()
        #expect(stop.allowancePassed() == .exit(.stoppedAtDeadline))
        // The services may still return while the process is exiting: it exits once.
        #expect(stop.servicesFinished() == nil)
    }

    @Test func servicesThatEndOnTheirOwnBeforeAnySignalExitZero() {
        var stop = ProcessStop(deadline: .seconds(30))
        #expect(stop.servicesFinished() == .stopped)
        #expect(stop.signalReceived() == .none)
    }

    @Test func timersBeforeTheSignalDoNothing() {
        var stop = ProcessStop(deadline: .seconds(30))
        #expect(stop.deadlinePassed() == .none)
        #expect(stop.allowancePassed() == .none)
        #expect(stop.phase == .running)
    }
}
