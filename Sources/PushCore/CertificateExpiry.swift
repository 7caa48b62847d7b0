public import APNsCore
import Foundation

/// When an app's APNs client certificate stops being valid, and what PushFleet makes of it: a
/// certificate that expires within ``warningPeriod`` is `expiring` (a warning at start, in
/// `/readyz` and in `pushfleet_apns_certificate_expiry_days`), one past its date is `expired`
/// (APNs refuses it; the app's sending is suspended the first time it does). Apps that sign
/// provider tokens have none: their keys do not expire.
public struct CertificateExpiry: Sendable, Hashable {
    /// What the date means now.
    public enum State: String, Sendable {
        case valid
        case expiring
        case expired
    }

    public var app: String
    public var environment: APNsEnvironment
    /// The certificate's notAfter, in milliseconds since 1970.
    public var notValidAfter: Int64

    /// How long before its date a certificate counts as expiring: 30 days.
    public static let warningPeriod: Duration = .seconds(30 * 86_400)

    public init(app: String, environment: APNsEnvironment, notValidAfter: Int64) {
        self.app = app
        self.environment = environment
        self.notValidAfter = notValidAfter
    }

    /// Days until the date at `now` (ms since 1970), negative once it has passed.
    public func daysLeft(now: Int64) -> Double {
        Double(notValidAfter - now) / 86_400_000
    }

    /// The state at `now` (ms since 1970).
    public func state(now: Int64) -> State {
        if notValidAfter <= now { return .expired }
        let warning = Self.warningPeriod.components.seconds * 1000
        return notValidAfter - now <= warning ? .expiring : .valid
    }

    /// The line logged at start for a certificate that is not `valid`; `nil` for a valid one.
    public func warning(now: Int64) -> String? {
        let days = Int(daysLeft(now: now).rounded(.down))
        switch state(now: now) {
        case .valid:
            return nil
        case .expiring:
            return "the APNs certificate of app \(app) (\(environment.rawValue)) expires in \(days) day(s), at "
                + "\(notValidAfterText): renew it before then"
        case .expired:
            return "the APNs certificate of app \(app) (\(environment.rawValue)) expired at "
                + "\(notValidAfterText): APNs refuses it; renew it"
        }
    }

    /// `{"app", "environment", "not-valid-after": RFC 3339, "days-left": n, "state"}`, as
    /// `/readyz` shows it.
    public func jsonValue(now: Int64) -> JSONValue {
        [
            "app": .string(app), "environment": .string(environment.rawValue),
            "not-valid-after": .string(notValidAfterText),
            "days-left": .number(JSONNumber(Int(daysLeft(now: now).rounded(.down)))),
            "state": .string(state(now: now).rawValue),
        ]
    }

    /// ``notValidAfter`` as an RFC 3339 timestamp.
    public var notValidAfterText: String {
        RFC3339Timestamp.string(from: Date(timeIntervalSince1970: Double(notValidAfter) / 1000))
    }
}
