import FlowControl
import Testing

@Suite("Exponential backoff")
struct ExponentialBackoffTests {
    @Test("doubles from the base up to the maximum")
    func doubling() {
        let backoff = ExponentialBackoff(base: .milliseconds(100), maximum: .seconds(1))
        #expect(
            (0...6).map { backoff.delay(attempt: $0) } == [
                .milliseconds(100), .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1),
            ])
        #expect(backoff.delay(attempt: .max) == .seconds(1))
        #expect(backoff.delay(attempt: .min) == .milliseconds(100))
        // Without jitter, random changes nothing.
        #expect(backoff.delay(attempt: 2, random: 0) == backoff.delay(attempt: 2, random: 1))
    }

    @Test("jitter spreads each wait over [1 − jitter, 1 + jitter] of it, never past the maximum")
    func jitter() {
        let backoff = ExponentialBackoff(base: .milliseconds(100), maximum: .seconds(5), jitter: 0.2)
        #expect(backoff.delay(attempt: 1, random: 0) == .milliseconds(80))
        #expect(backoff.delay(attempt: 1, random: 0.5) == .milliseconds(100))
        #expect(backoff.delay(attempt: 1, random: 1) == .milliseconds(120))
        #expect(backoff.delay(attempt: 3, random: 0.25) == .milliseconds(360))
        #expect(backoff.delay(attempt: 7, random: 1) == .seconds(5), "capped after jitter")
        #expect(backoff.delay(attempt: 7, random: 0) == .seconds(4))
        #expect(backoff.delay(attempt: 1, random: 7) == .milliseconds(120), "random is clamped")
        for _ in 0..<1_000 {
            let delay = backoff.randomDelay(attempt: 2)
            #expect(delay >= .milliseconds(160) && delay <= .milliseconds(240))
        }
    }

    @Test("a zero base never waits")
    func zero() {
        #expect(ExponentialBackoff(base: .zero, maximum: .zero, jitter: 1).delay(attempt: 9, random: 1) == .zero)
    }
}
