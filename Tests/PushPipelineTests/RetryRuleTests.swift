import APNs
import Kafka
import PushStore
import Redis
import Testing

@testable import PushPipeline

@Suite("Retry rule")
struct RetryRuleTests {
    let rule = RetryRule()

    static let transient: [any Error & Sendable] = [
        RedisClientError(.connectionFailed, message: "127.0.0.1:6379 refused"),
        RedisClientError(.timeout, message: "no reply"),
        RedisClientError(.serverError, message: "LOADING Redis is loading the dataset in memory"),
        RedisClientError(.serverError, message: "TRYAGAIN multiple keys request during rehashing"),
        KafkaError(code: .delivery, message: "message timed out", isRetryable: true),
        APNsError(.connectFailed),
        StoreError(.unexpectedReply, field: nil, message: "busy", isRetryable: true),
    ]

    static let permanent: [any Error & Sendable] = [
        RedisClientError(.serverError, message: "WRONGTYPE Operation against a key holding the wrong kind of value"),
        RedisClientError(.serverError, message: "ERR Error running script: attempt to compare nil with number"),
        KafkaError(code: .delivery, message: "MSG_SIZE_TOO_LARGE"),
        StoreError(.invalidArgument, field: "app", message: "must not be empty"),
        APNsError(.invalidCredential),
        JobControl.Refusal(code: .notPaused, message: "the job is not paused"),
    ]

    @Test("a transient error is retried for as long as it lasts", arguments: 0..<transient.count)
    func transientForever(index: Int) {
        let error = Self.transient[index]
        #expect(RetryRule.isTransient(error))
        for failures in [1, 3, 50, 10_000] {
            guard case .retry = rule.decision(after: error, failures: failures, random: 0.5) else {
                Issue.record("\(error) gave up after \(failures) failure(s)")
                return
            }
        }
    }

    @Test("any other error gets three attempts, then it is thrown", arguments: 0..<permanent.count)
    func otherErrorsBounded(index: Int) {
        let error = Self.permanent[index]
        #expect(!RetryRule.isTransient(error))
        #expect(rule.decision(after: error, failures: 1, random: 0.5) != .giveUp)
        #expect(rule.decision(after: error, failures: 2, random: 0.5) != .giveUp)
        #expect(rule.decision(after: error, failures: 3, random: 0.5) == .giveUp)
    }

    @Test("cancellation is never retried")
    func neverRetried() {
        #expect(rule.decision(after: CancellationError(), failures: 1, random: 0.5) == .giveUp)
    }

    @Test("the delay doubles from 100 ms to at most 5 s, jittered by ±20%")
    func delays() {
        let error = RedisClientError(.timeout, message: "no reply")
        #expect(rule.decision(after: error, failures: 1, random: 0.5) == .retry(after: .milliseconds(100)))
        #expect(rule.decision(after: error, failures: 2, random: 0.5) == .retry(after: .milliseconds(200)))
        #expect(rule.decision(after: error, failures: 7, random: 0.5) == .retry(after: .seconds(5)))
        for random in [0.0, 0.3, 1.0] {
            guard case .retry(let delay) = rule.decision(after: error, failures: 1, random: random) else {
                Issue.record("a timeout is retried")
                return
            }
            #expect(delay >= .microseconds(79_999) && delay <= .microseconds(120_001), "\(delay)")
        }
    }
}
