import PushConfiguration
import PushJobs
import PushStore
import Testing

@testable import PushPipeline

@Suite("Campaign circuit breaker")
struct CampaignBreakerTests {
    let breaker = CampaignBreaker(settings: BreakerSettings(watchNotifications: 2_000, minNotifications: 200, maxRejectedShare: 0.1))

    func report(sent: Int, failed: [String: Int] = [:], expanded: Int = 100_000, complete: Bool = false) -> JobReport {
        var counters = ["sent": sent, "expanded": expanded, "accepted": sent - failed.values.reduce(0, +)]
        for (reason, count) in failed {
            counters["failed:\(reason)"] = count
        }
        if complete {
            counters["expansion-complete"] = 1
            counters["expanded"] = sent
        }
        return JobReport(jobID: "j", counters: counters)
    }

    @Test("below the minimum the job is still watched, whatever the share")
    func belowMinimum() {
        #expect(breaker.verdict(report(sent: 199, failed: ["BadDeviceToken": 199])) == .watching)
    }

    @Test("above the share once the minimum is in: tripped, naming the reasons")
    func trips() {
        let verdict = breaker.verdict(report(sent: 250, failed: ["BadDeviceToken": 200, "DeviceTokenNotForTopic": 30]))
        guard case .trip(let reason) = verdict else {
            Issue.record("expected a trip, got \(verdict)")
            return
        }
        #expect(reason.contains("230 of the first 250"))
        #expect(reason.contains("BadDeviceToken 200"))
        #expect(reason.contains("DeviceTokenNotForTopic 30"))
    }

    @Test("the share's bound itself does not trip; one more does")
    func boundary() {
        #expect(breaker.verdict(report(sent: 1_000, failed: ["BadDeviceToken": 100])) == .watching)
        guard case .trip = breaker.verdict(report(sent: 1_000, failed: ["BadDeviceToken": 101])) else {
            Issue.record("101 of 1,000 is above 10%")
            return
        }
    }

    @Test("410s are not judged: a stale registry is no misconfiguration")
    func unregisteredNotCounted() {
        #expect(breaker.verdict(report(sent: 2_000, failed: ["Unregistered": 900, "ExpiredToken": 100])) == .clear)
    }

    @Test("refusals Apple does not document count with the token rejections")
    func undocumentedCount() {
        guard case .trip = breaker.verdict(report(sent: 500, failed: ["Odd": 60])) else {
            Issue.record("60 undocumented refusals of 500 are above 10%")
            return
        }
    }

    @Test("cleared after enough sound answers, or when the job finished first")
    func clears() {
        #expect(breaker.verdict(report(sent: 1_999, failed: ["BadDeviceToken": 20])) == .watching)
        #expect(breaker.verdict(report(sent: 2_000, failed: ["BadDeviceToken": 20])) == .clear)
        #expect(breaker.verdict(report(sent: 3, failed: ["BadDeviceToken": 3], complete: true)) == .clear, "too small to judge")
        guard case .trip = breaker.verdict(report(sent: 300, failed: ["BadDeviceToken": 300], complete: true)) else {
            Issue.record("a finished job with every token rejected is tripped, so its changes stay held")
            return
        }
    }
}
