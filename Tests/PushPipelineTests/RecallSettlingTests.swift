import Testing

@testable import PushPipeline

/// ``RecallSettling``: when a recall may read its campaign's sent state.
struct RecallSettlingTests {
    @Test func aCompleteCampaignGoesAtOnce() {
        var settling = RecallSettling()
        #expect(settling.observe(complete: true, finished: 10, at: .zero) == .go(settled: true))
    }

    @Test func aCampaignStillSettlingIsWaitedForUntilItsCountStaysStill() {
        var settling = RecallSettling(quietPeriod: .seconds(10), longest: .seconds(60))
        #expect(settling.observe(complete: false, finished: 100, at: .zero) == .wait)
        #expect(settling.observe(complete: false, finished: 150, at: .seconds(5)) == .wait)
        #expect(settling.observe(complete: false, finished: 150, at: .seconds(14)) == .wait, "still for 9 s only")
        #expect(settling.observe(complete: false, finished: 150, at: .seconds(15)) == .go(settled: true))
    }

    @Test func aCampaignThatKeepsMovingIsWaitedForAtMostTheLongest() {
        var settling = RecallSettling(quietPeriod: .seconds(10), longest: .seconds(60))
        var finished = 0
        for second in stride(from: 0, to: 60, by: 5) {
            finished += 1
            #expect(settling.observe(complete: false, finished: finished, at: .seconds(second)) == .wait)
        }
        #expect(settling.observe(complete: false, finished: finished + 1, at: .seconds(60)) == .go(settled: false))
    }
}
