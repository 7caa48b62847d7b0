public import APNs
public import APNsCore
import NIOCore
import PushConfiguration

/// `pushfleet credentials check`: what one probe notification tells of an app's credential in
/// one environment. The probe is a background notification to a device token of zeros, which
/// no device has: APNs checks the connection's certificate or the provider token, then the
/// topic and environment, and only then the token, so `BadDeviceToken` means everything before
/// it was accepted, and nothing reaches a device.
public enum CredentialCheck {
    /// What the answer says of the credential.
    public enum Verdict: Equatable, Sendable {
        /// APNs accepted the credential, topic and environment (`answer` says how it ended).
        case accepted(answer: String)
        /// APNs refused the credential (a certificate or provider token problem).
        case credentialRefused(reason: String)
        /// APNs refused the request for the topic or environment (wrong bundle id, a certificate
        /// of the other environment, …): the credential may be fine, the configuration is not.
        case configurationRefused(reason: String)
        /// APNs could not say (busy, shutting down): try again.
        case inconclusive(reason: String)
        /// No answer: the connection or TLS handshake failed (a certificate the server refused
        /// ends here), or the credential could not be used.
        case unreachable(reason: String)

        /// Whether the check passed.
        public var passed: Bool {
            if case .accepted = self { return true }
            return false
        }
    }

    /// The device token of the probe: 32 zero bytes.
    public static let probeToken = try! DeviceToken(hex: String(repeating: "0", count: 64))

    /// The probe for `app` in `environment`.
    public static func probe(for app: PushApp, environment: APNsEnvironment) -> APNsRequest {
        APNsRequest(
            credential: app.credential(for: environment), environment: environment, deviceToken: probeToken,
            bundleID: app.settings.bundleID, pushType: .background, priority: .considerDevicePower, expiration: 0,
            payload: ByteBuffer(string: #"{"aps":{"content-available":1}}"#))
    }

    /// The verdict of the probe's outcome.
    public static func verdict(_ outcome: Result<APNsResponse, APNsError>) -> Verdict {
        switch outcome {
        case .failure(let error):
            let detail = error.underlying.map { ": \($0)" } ?? ""
            return .unreachable(reason: "\(error.code)\(detail)")
        case .success(let response):
            let answer = "\(response.status) \(response.reason?.rawValue ?? (response.isSuccess ? "accepted" : "without a reason"))"
            switch response.responseClass {
            case .success, .tokenRejected, .unregistered:
                return .accepted(answer: answer)
            case .providerAuthentication:
                return .credentialRefused(reason: answer)
            case .misconfiguration, .permanent:
                return .configurationRefused(reason: answer)
            case .retryable:
                return .inconclusive(reason: answer)
            }
        }
    }
}
