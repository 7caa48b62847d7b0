import Testing

@testable import APNsCore

@Suite("Retry-After: seconds or an HTTP date (APNsRetryAfter)")
struct APNsRetryAfterTests {
    /// 1994-11-06 08:49:37 UTC, the date of RFC 9110's examples, in milliseconds since 1970.
    static let example: Int64 = 784_111_777_000

    @Test("a number of seconds is the wait, whatever the clock says")
    func seconds() {
        #expect(APNsRetryAfter.delay("120", nowMilliseconds: Self.example) == .seconds(120))
        #expect(APNsRetryAfter.delay("0", nowMilliseconds: 0) == .zero)
        #expect(APNsRetryAfter.delay(" 7\t", nowMilliseconds: 0) == .seconds(7))
    }

    @Test("the three HTTP date forms give the time left until that date")
    func dates() {
        let earlier = Self.example - 90_500
        for form in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            #expect(APNsRetryAfter.delay(form, nowMilliseconds: earlier) == .milliseconds(90_500), "\(form)")
        }
    }

    @Test("a date that has passed is no wait; a wait past a day is cut to a day")
    func bounds() {
        #expect(APNsRetryAfter.delay("Sun, 06 Nov 1994 08:49:37 GMT", nowMilliseconds: Self.example + 5_000) == .zero)
        #expect(APNsRetryAfter.delay("999999", nowMilliseconds: 0) == APNsRetryAfter.longest)
        #expect(APNsRetryAfter.delay("99999999999999999999999", nowMilliseconds: 0) == APNsRetryAfter.longest)
        #expect(APNsRetryAfter.delay("Fri, 31 Dec 9999 23:59:59 GMT", nowMilliseconds: Self.example) == APNsRetryAfter.longest)
    }

    @Test("a two-digit year more than 50 years ahead is read as the past century's")
    func twoDigitYears() {
        // At the start of 2026, "76" is 2076 (50 years ahead) and "77" is 1977.
        let start2026: Int64 = 1_767_225_600_000
        #expect(APNsRetryAfter.delay("Friday, 01-Jan-76 00:00:00 GMT", nowMilliseconds: start2026) == APNsRetryAfter.longest)
        #expect(APNsRetryAfter.delay("Saturday, 01-Jan-77 00:00:00 GMT", nowMilliseconds: start2026) == .zero)
    }

    @Test("anything else is not a Retry-After")
    func malformed() {
        for value in [
            "", " ", "-5", "1.5", "12abc", "soon", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 32 Nov 1994 08:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:49 GMT",
            "Sun Nov  6 08:49:37", "Sun, 06 Nov 994 08:49:37 GMT",
        ] {
            #expect(APNsRetryAfter.delay(value, nowMilliseconds: Self.example) == nil, "\(value)")
        }
    }

    @Test("days since 1970 follow the Gregorian calendar, leap days and the years before 1970 included, both ways")
    func calendar() {
        #expect(CivilDays.since1970(year: 1970, month: 1, day: 1) == 0)
        #expect(CivilDays.since1970(year: 1969, month: 12, day: 31) == -1)
        #expect(CivilDays.since1970(year: 2000, month: 2, day: 29) == 951_782_400 / 86_400)
        #expect(CivilDays.since1970(year: 2026, month: 11, day: 26) == 20_783)
        for days in [-719_468, -1, 0, 11_016, 20_783, 2_932_896] {
            let date = CivilDays.date(daysSince1970: days)
            #expect(CivilDays.since1970(year: date.year, month: date.month, day: date.day) == days)
        }
    }
}
