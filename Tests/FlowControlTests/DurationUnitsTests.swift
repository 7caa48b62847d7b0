import FlowControl
import Testing

@Suite struct DurationUnitsTests {
    @Test func wholeMillisecondsRoundDownTowardsZero() {
        #expect(Duration.milliseconds(1_500).wholeMilliseconds == 1_500)
        #expect(Duration.microseconds(1_999).wholeMilliseconds == 1)
        #expect(Duration.microseconds(-1_999).wholeMilliseconds == -1)
        #expect(Duration.zero.wholeMilliseconds == 0)
    }

    @Test func roundedUpMillisecondsAreNeverShortOfTheDuration() {
        #expect(Duration.microseconds(1_001).roundedUpMilliseconds == 2)
        #expect(Duration.milliseconds(3).roundedUpMilliseconds == 3)
        #expect(Duration.nanoseconds(1).roundedUpMilliseconds == 1)
    }

    @Test func nanosecondsAreWhole() {
        #expect(Duration.seconds(2).nanoseconds == 2_000_000_000)
        #expect(Duration.microseconds(-3).nanoseconds == -3_000)
        #expect((Duration.nanoseconds(7) + .seconds(1)).nanoseconds == 1_000_000_007)
    }

    @Test func hugeDurationsSaturateInsteadOfOverflowing() {
        let huge = Duration.seconds(Int64.max)
        #expect(huge.wholeMilliseconds == .max)
        #expect(huge.roundedUpMilliseconds == .max)
        #expect(huge.nanoseconds == .max)
        let negative = Duration.seconds(Int64.min)
        #expect(negative.wholeMilliseconds == .min)
        #expect(negative.nanoseconds == .min)
        #expect(Duration.seconds(10_000_000_000).nanoseconds == .max)
    }
}
