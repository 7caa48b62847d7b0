import Testing

@testable import PushStore

/// The rules of ``JobControl``, without Redis.
@Suite("Job control state")
struct JobControlTests {
    let new = JobControl()

    func apply(_ control: JobControl, _ command: JobControl.Command) throws -> JobControl? {
        try control.applying(command)
    }

    @Test("a new job runs, watched by the breaker, its registry changes held")
    func newJob() {
        #expect(new.state == .running && new.breaker == .watching && new.gate == .hold && new.version == 0)
    }

    @Test("the breaker clears a watched job: its changes apply; clearing again changes nothing")
    func clear() throws {
        let cleared = try #require(try apply(new, .clear))
        #expect(cleared.breaker == .cleared && cleared.gate == .apply && cleared.version == 1)
        #expect(try apply(cleared, .clear) == nil)
    }

    @Test("the breaker trips a running job: paused with the reason, changes held; the first reason stays")
    func trip() throws {
        let tripped = try #require(try apply(new, .trip(reason: "wrong topic", at: 5)))
        #expect(tripped.state == .paused && tripped.breaker == .tripped && tripped.pausedBy == .breaker)
        #expect(tripped.reason == "wrong topic" && tripped.changedAt == 5 && tripped.gate == .hold)
        #expect(try apply(tripped, .trip(reason: "again", at: 6)) == nil)
        let cleared = try #require(try apply(new, .clear))
        #expect(try apply(cleared, .trip(reason: "BadTopic", at: 7))?.state == .paused, "a refusal of the whole request trips a cleared job too")
    }

    @Test("resuming a tripped job clears the breaker: the operator judged the answers genuine")
    func resumeTripped() throws {
        let tripped = try #require(try apply(new, .trip(reason: "r", at: 5)))
        let resumed = try #require(try apply(tripped, .resume(at: 9)))
        #expect(resumed.state == .running && resumed.breaker == .cleared && resumed.gate == .apply)
        #expect(resumed.reason == nil && resumed.pausedBy == nil && resumed.changedAt == 9)
    }

    @Test("an operator's pause and resume return a job to where it was")
    func operatorPause() throws {
        let paused = try #require(try apply(new, .pause(reason: "hold on", at: 3)))
        #expect(paused.state == .paused && paused.pausedBy == .operator && paused.breaker == .watching && paused.gate == .hold)
        #expect(try apply(paused, .pause(reason: "again", at: 4)) == nil)
        let resumed = try #require(try apply(paused, .resume(at: 5)))
        #expect(resumed.state == .running && resumed.breaker == .watching && resumed.gate == .hold, "still watched")
    }

    @Test("resuming a job that is not paused is refused")
    func resumeRunning() {
        #expect(throws: JobControl.Refusal(code: .notPaused, message: "the job is not paused")) { try apply(new, .resume(at: 1)) }
    }

    @Test("cancelling ends any job for good: its changes are discarded; nothing else applies after")
    func cancel() throws {
        let paused = try #require(try apply(new, .trip(reason: "r", at: 1)))
        for start in [new, paused] {
            let cancelled = try #require(try apply(start, .cancel(reason: "aborted", at: 2)))
            #expect(cancelled.state == .cancelled && cancelled.gate == .discard && cancelled.reason == "aborted")
            #expect(try apply(cancelled, .cancel(reason: "again", at: 3)) == nil)
            for command in [JobControl.Command.pause(reason: "p", at: 4), .resume(at: 4), .setRate(10)] {
                #expect(throws: JobControl.Refusal.self) { try apply(cancelled, command) }
            }
            #expect(try apply(cancelled, .trip(reason: "late", at: 5)) == nil)
            #expect(try apply(cancelled, .clear) == nil)
        }
    }

    @Test("an operator's rate: set, changed, removed; refused unless finite and above 0")
    func rate() throws {
        let set = try #require(try apply(new, .setRate(250)))
        #expect(set.ratePerSecond == 250 && set.state == .running)
        #expect(try apply(set, .setRate(250)) == nil)
        #expect(try apply(set, .setRate(nil))?.ratePerSecond == nil)
        for bad in [0, -1, Double.infinity, Double.nan] {
            #expect(throws: JobControl.Refusal.self) { try apply(new, .setRate(bad)) }
        }
    }

    @Test("the stored fields read back as the same state")
    func fields() throws {
        var control = try #require(try apply(new, .trip(reason: "a reason, with: punctuation", at: 1_700_000_000_123)))
        control = try #require(try apply(control, .setRate(12.5)))
        let stored = Dictionary(uniqueKeysWithValues: control.fields.filter { !$0.1.isEmpty })
        #expect(stored["gate"] == "hold")
        #expect(JobControl(fields: stored) == control)
        #expect(JobControl(fields: [:]) == new)
        #expect(JobControl(fields: ["state": "exploded"]) == nil)
        #expect(JobControl(fields: ["rate": "-3"]) == nil)
    }
}
