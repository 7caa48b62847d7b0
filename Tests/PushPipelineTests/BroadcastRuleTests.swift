import APNs
import APNsCore
import Testing

@testable import PushPipeline

@Suite("What follows a broadcast attempt (BroadcastRule)")
struct BroadcastRuleTests {
    static func answer(_ status: Int, _ reason: APNsReason? = nil, retryAfter: Duration? = nil) -> Result<APNsResponse, APNsError> {
        .success(APNsResponse(status: status, apnsID: nil, reason: reason, timestamp: nil, retryAfter: retryAfter, attempts: 1))
    }

    @Test("accepted, or failed at once with APNs's reason when sending again cannot help")
    func finalAnswers() {
        let rule = BroadcastRule()
        #expect(rule.decision(after: Self.answer(200), attempt: 1, random: 0.5) == .accepted)
        #expect(rule.decision(after: Self.answer(400, .channelNotRegistered), attempt: 1, random: 0.5) == .failed(reason: "ChannelNotRegistered"))
        #expect(rule.decision(after: Self.answer(403, .invalidProviderToken), attempt: 1, random: 0.5) == .failed(reason: "InvalidProviderToken"))
        #expect(rule.decision(after: Self.answer(400), attempt: 1, random: 0.5) == .failed(reason: "status-400"))
        #expect(rule.decision(after: .failure(APNsError(.invalidCredential)), attempt: 1, random: 0.5) == .failed(reason: "apns-invalidCredential"))
    }

    @Test("429, 5xx and lost connections are retried with backoff, at least Retry-After, until the attempts run out")
    func retries() {
        let rule = BroadcastRule()
        #expect(rule.decision(after: Self.answer(503, .serviceUnavailable), attempt: 1, random: 0.5) == .retry(after: .seconds(1)))
        #expect(rule.decision(after: Self.answer(500, .internalServerError), attempt: 3, random: 0.5) == .retry(after: .seconds(4)))
        #expect(rule.decision(after: .failure(APNsError(.connectionLost)), attempt: 2, random: 0.5) == .retry(after: .seconds(2)))
        #expect(
            rule.decision(after: Self.answer(429, .tooManyRequests, retryAfter: .seconds(20)), attempt: 1, random: 0.5) == .retry(after: .seconds(20))
        )
        #expect(rule.decision(after: Self.answer(429, .tooManyRequests), attempt: 8, random: 0.5) == .failed(reason: "TooManyRequests"))
        #expect(rule.decision(after: .failure(APNsError(.timeout)), attempt: 8, random: 0.5) == .failed(reason: "apns-timeout"))
        // A wait longer than a minute is not held: the broadcast fails with the reason.
        #expect(
            rule.decision(after: Self.answer(429, .tooManyRequests, retryAfter: .seconds(3_600)), attempt: 1, random: 0.5)
                == .failed(reason: "TooManyRequests"))
    }
}
