import APNsCore
import PushCore
import Testing

@Suite("When a client certificate expires (CertificateExpiry)")
struct CertificateExpiryTests {
    static let day: Int64 = 86_400_000
    /// 2026-11-26T00:00:00Z.
    static let date: Int64 = 1_795_651_200_000
    static let expiry = CertificateExpiry(app: "news", environment: .production, notValidAfter: date)

    @Test("valid until 30 days before its date, expiring from then, expired at the date")
    func states() {
        let expiry = Self.expiry
        #expect(expiry.state(now: Self.date - 31 * Self.day) == .valid)
        #expect(expiry.state(now: Self.date - 30 * Self.day - 1) == .valid)
        #expect(expiry.state(now: Self.date - 30 * Self.day) == .expiring)
        #expect(expiry.state(now: Self.date - 1) == .expiring)
        #expect(expiry.state(now: Self.date) == .expired)
        #expect(expiry.daysLeft(now: Self.date - Self.day / 2) == 0.5)
        #expect(expiry.daysLeft(now: Self.date + 2 * Self.day) == -2)
    }

    @Test("a warning for an expiring or expired certificate names the app, environment and date; none for a valid one")
    func warnings() {
        let expiry = Self.expiry
        #expect(expiry.warning(now: Self.date - 40 * Self.day) == nil)
        #expect(
            expiry.warning(now: Self.date - 9 * Self.day - 5)
                == "the APNs certificate of app news (production) expires in 9 day(s), at 2026-11-26T00:00:00Z: renew it before then")
        #expect(
            expiry.warning(now: Self.date + 1)
                == "the APNs certificate of app news (production) expired at 2026-11-26T00:00:00Z: APNs refuses it; renew it")
    }

    @Test("/readyz shows app, environment, date, whole days left and state")
    func json() {
        #expect(
            Self.expiry.jsonValue(now: Self.date - 12 * Self.day - 1)
                == [
                    "app": "news", "environment": "production", "not-valid-after": "2026-11-26T00:00:00Z", "days-left": 12,
                    "state": "expiring",
                ])
    }
}
