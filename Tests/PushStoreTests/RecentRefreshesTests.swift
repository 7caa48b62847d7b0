import Testing

@testable import PushStore

/// ``RecentRefreshes``: which keys a write path gives their TTL again.
@Suite struct RecentRefreshesTests {
    @Test func aKeyIsDueAgainOnceAQuarterOfItsTimeToLiveHasPassed() {
        let refreshes = RecentRefreshes(timeToLive: .seconds(60))
        #expect(refreshes.interval == .seconds(15))
        let start = ContinuousClock.now
        #expect(refreshes.due(["a", "b"], at: start) == ["a", "b"], "never refreshed")
        refreshes.record(["a"], at: start)
        #expect(refreshes.due(["a", "b"], at: start + .seconds(15)) == ["b"])
        #expect(refreshes.due(["a", "b"], at: start + .seconds(16)) == ["a", "b"])
    }

    @Test func theIntervalIsAtMostTenMinutes() {
        #expect(RecentRefreshes(timeToLive: .seconds(7 * 86_400)).interval == .seconds(600))
    }

    @Test func pastItsLimitItForgetsAndStartsOver() {
        let refreshes = RecentRefreshes(timeToLive: .seconds(60))
        let now = ContinuousClock.now
        refreshes.record((0...RecentRefreshes.limit).map { "k\($0)" }, at: now)
        #expect(refreshes.due(["k0"], at: now).isEmpty)
        refreshes.record(["new"], at: now)
        #expect(refreshes.due(["k0", "new"], at: now) == ["k0"], "the keys before were forgotten")
    }
}
