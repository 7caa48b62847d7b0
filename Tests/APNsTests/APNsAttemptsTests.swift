import NIOCore
import Testing

@testable import APNs

/// The rule for what follows one send of a notification, without a connection.
@Suite("What follows a send (APNsAttempts)")
struct APNsAttemptsTests {
    static func describe(_ next: APNsAttempts.Next) -> String {
        switch next {
        case .done(.success(let response)): "done \(response.status) \(response.reason.map { "\($0)" } ?? "-") after \(response.attempts)"
        case .done(.failure(let error)): "failed \(error.code)"
        case .sendAgain: "send again"
        case .backOff(let attempt, nil): "back off \(attempt)"
        case .backOff(let attempt, let atLeast?): "back off \(attempt) at least \(atLeast)"
        case .renewProviderToken(let otherwise): "renew token, otherwise \(describe(otherwise))"
        }
    }

    static func answer(_ status: Int, _ reason: String? = nil, retryAfter: String? = nil) -> APNsAttempts.Outcome {
        .stream(
            .response(
                status: status, headers: APNsAnswerHeaders(apnsID: "id", retryAfter: retryAfter),
                body: reason.map { ByteBuffer(string: #"{"reason":"\#($0)"}"#) }))
    }

    @Test("a Retry-After of up to the longest wait sets the backoff's least; a longer one ends the sends with the answer")
    func retryAfter() {
        var short = APNsAttempts(maxAttempts: 3, maxRefusals: 10)
        #expect(
            Self.describe(short.next(after: Self.answer(429, "TooManyRequests", retryAfter: "2"), usesProviderToken: false))
                == "back off 1 at least 2.0 seconds")
        #expect(
            Self.describe(short.next(after: Self.answer(503, "ServiceUnavailable", retryAfter: "soon"), usesProviderToken: false)) == "back off 2")
        var long = APNsAttempts(maxAttempts: 3, maxRefusals: 10)
        let answer = long.next(after: Self.answer(503, "ServiceUnavailable", retryAfter: "6"), usesProviderToken: false)
        #expect(Self.describe(answer) == "done 503 ServiceUnavailable after 1")
        if case .done(.success(let response)) = answer {
            #expect(response.retryAfter == .seconds(6), "the caller learns the wait")
        }
        var accepted = APNsAttempts(maxAttempts: 3, maxRefusals: 10)
        #expect(Self.describe(accepted.next(after: Self.answer(200, retryAfter: "1"), usesProviderToken: false)) == "done 200 - after 1")
    }

    @Test("an answer is final when it is not retryable, or when no attempt is left")
    func answers() {
        var once = APNsAttempts(maxAttempts: 1, maxRefusals: 10)
        #expect(Self.describe(once.next(after: Self.answer(200), usesProviderToken: true)) == "done 200 - after 1")
        var once503 = APNsAttempts(maxAttempts: 1, maxRefusals: 10)
        #expect(
            Self.describe(once503.next(after: Self.answer(503, "ServiceUnavailable"), usesProviderToken: true))
                == "done 503 ServiceUnavailable after 1")
        var thrice = APNsAttempts(maxAttempts: 3, maxRefusals: 10)
        let sequence = (0..<3).map { _ in Self.describe(thrice.next(after: Self.answer(503, "ServiceUnavailable"), usesProviderToken: false)) }
        #expect(sequence == ["back off 1", "back off 2", "done 503 ServiceUnavailable after 3"])
        var bad = APNsAttempts(maxAttempts: 3, maxRefusals: 10)
        #expect(Self.describe(bad.next(after: Self.answer(400, "BadDeviceToken"), usesProviderToken: false)) == "done 400 BadDeviceToken after 1")
    }

    @Test("a refused stream is sent again without counting as an attempt, up to the refusal limit")
    func refusals() {
        var attempts = APNsAttempts(maxAttempts: 1, maxRefusals: 2)
        #expect(Self.describe(attempts.next(after: .stream(.refused), usesProviderToken: false)) == "send again")
        #expect(Self.describe(attempts.next(after: .stream(.refused), usesProviderToken: false)) == "send again")
        #expect(attempts.attempts == 0)
        #expect(Self.describe(attempts.next(after: .stream(.refused), usesProviderToken: false)) == "failed refused")
        var answered = APNsAttempts(maxAttempts: 1, maxRefusals: 2)
        _ = answered.next(after: .stream(.refused), usesProviderToken: false)
        #expect(Self.describe(answered.next(after: Self.answer(200), usesProviderToken: false)) == "done 200 - after 1")
    }

    @Test("an expired provider token is renewed once, and only when the request carried one")
    func expiredProviderToken() {
        var attempts = APNsAttempts(maxAttempts: 1, maxRefusals: 10)
        let expired = Self.answer(403, "ExpiredProviderToken")
        #expect(
            Self.describe(attempts.next(after: expired, usesProviderToken: true)) == "renew token, otherwise done 403 ExpiredProviderToken after 1")
        #expect(Self.describe(attempts.next(after: expired, usesProviderToken: true)) == "done 403 ExpiredProviderToken after 2")
        var certificate = APNsAttempts(maxAttempts: 1, maxRefusals: 10)
        #expect(Self.describe(certificate.next(after: expired, usesProviderToken: false)) == "done 403 ExpiredProviderToken after 1")
    }

    @Test("a lost connection or a timeout is retried while attempts remain, then fails with its code")
    func noAnswer() {
        struct Reset: Error {}
        var lost = APNsAttempts(maxAttempts: 2, maxRefusals: 10)
        #expect(Self.describe(lost.next(after: .stream(.connectionLost(Reset())), usesProviderToken: false)) == "back off 1")
        #expect(Self.describe(lost.next(after: .stream(.connectionLost(Reset())), usesProviderToken: false)) == "failed connectionLost")
        var late = APNsAttempts(maxAttempts: 1, maxRefusals: 10)
        #expect(Self.describe(late.next(after: .stream(.timedOut), usesProviderToken: false)) == "failed timeout")
    }

    @Test("no stream: a timeout or a failed connect counts as an attempt; anything else ends at once")
    func noStream() {
        var waited = APNsAttempts(maxAttempts: 2, maxRefusals: 10)
        #expect(Self.describe(waited.next(after: .noStream(APNsError(.timeout)), usesProviderToken: false)) == "back off 1")
        #expect(Self.describe(waited.next(after: .noStream(APNsError(.connectFailed)), usesProviderToken: false)) == "failed connectFailed")
        var stopping = APNsAttempts(maxAttempts: 5, maxRefusals: 10)
        #expect(Self.describe(stopping.next(after: .noStream(APNsError(.shutdown)), usesProviderToken: false)) == "failed shutdown")
        #expect(stopping.attempts == 0)
    }
}
