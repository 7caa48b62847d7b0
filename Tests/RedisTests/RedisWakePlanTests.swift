import Testing

@testable import Redis

@Suite("RedisWakePlan: when the event loop sleeps and who wakes it")
struct RedisWakePlanTests {
    private let now = ContinuousClock.now

    @Test func beforeTheFirstPlanNoRegistrationWakesTheLoop() {
        let plan = RedisWakePlan()
        #expect(!plan.needsWake(for: now))
        #expect(!plan.needsWake(for: nil))
    }

    @Test func withNothingDueTheLoopSleepsTheIdleSleep() {
        var plan = RedisWakePlan()
        #expect(plan.planSleep(now: now, earliestDeadline: nil) == 1_000)
        #expect(plan.plannedWake == now + RedisWakePlan.idleSleep)
        // A deadline far off never makes the sleep longer than the idle sleep.
        #expect(plan.planSleep(now: now, earliestDeadline: now + .seconds(30)) == 1_000)
    }

    @Test func onlyADeadlineBeforeThePlannedWakeNeedsAWakeUp() {
        var plan = RedisWakePlan()
        _ = plan.planSleep(now: now, earliestDeadline: now + .milliseconds(600))
        #expect(plan.needsWake(for: now + .milliseconds(200)))
        #expect(!plan.needsWake(for: now + .milliseconds(600)))
        #expect(!plan.needsWake(for: now + .seconds(5)))
        #expect(!plan.needsWake(for: nil), "an exchange without a timeout has nothing to wake for")
    }

    @Test func sleepsAreRoundedUpToWholeMillisecondsAndADueDeadlineIsNoSleep() {
        var plan = RedisWakePlan()
        #expect(plan.planSleep(now: now, earliestDeadline: now + .microseconds(1_500)) == 2)
        #expect(plan.planSleep(now: now, earliestDeadline: now + .nanoseconds(1)) == 1)
        #expect(plan.planSleep(now: now, earliestDeadline: now + .milliseconds(250)) == 250)
        #expect(plan.planSleep(now: now, earliestDeadline: now) == 0)
        #expect(plan.planSleep(now: now, earliestDeadline: now - .seconds(1)) == 0)
    }
}
