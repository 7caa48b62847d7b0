import Testing

@testable import PushFleetBenchmarks

/// How long the fault suite lets a campaign stand still before ending it.
@Suite struct FaultPlanTests {
    @Test func aCampaignEndsAfterAMinuteWithoutProgressSoonerWhereNothingCanFinish() {
        let quick = FaultPlan(quick: true, devices: 20_000, rate: 2_000)
        let full = FaultPlan(quick: false, devices: 200_000, rate: 5_000)
        #expect(quick.stall(for: .redisRestartEmpty) == .seconds(20), "the job's state is gone: nothing left to wait for")
        #expect(full.stall(for: .redisRestartEmpty) == .seconds(60), "the full run keeps the minute")
        for plan in [quick, full] {
            #expect(plan.stall(for: .providerTokenRevoked) == .seconds(120), "the credential's suspension is waited out")
            for scenario in FaultScenario.allCases where scenario != .providerTokenRevoked && scenario != .redisRestartEmpty {
                #expect(plan.stall(for: scenario) == .seconds(60), "\(scenario)")
            }
        }
    }
}
