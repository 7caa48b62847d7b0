import APNs
import APNsCore

/// What the feedback worker does with one `push.feedback` event: a rule in a value type.
///
/// Only APNs's 410 (`Unregistered`, `ExpiredToken`) removes a token, and only when it was not
/// registered again after APNs's timestamp. `BadDeviceToken` and `DeviceTokenNotForTopic`
/// never remove one: the usual cause is a misconfiguration, not a dead device. The token is kept
/// aside as suspect, unless it may belong to the app's other environment (`BadDeviceToken`, the
/// app enabled for both, probing on): then it is tried there once, and the answer decides
/// (``ProbeVerdict``). Any other reason changes nothing.
enum RegistryChange: Equatable, Sendable {
    /// Remove the token unless it was registered again after `invalidSince`.
    case remove(invalidSince: Int64)
    /// Keep the token aside as suspect, with the reason.
    case keepAside(reason: String)
    /// Try the token in the other environment, then apply the ``ProbeVerdict``.
    case probeOtherEnvironment
    /// Change nothing (a reason that says nothing about the token).
    case none

    init(reason: String, invalidSince: Int64, appEnvironments: [APNsEnvironment], environment: APNsEnvironment, probing: Bool) {
        switch APNsReason(rawValue: reason) {
        case .unregistered, .expiredToken:
            self = .remove(invalidSince: invalidSince)
        case .badDeviceToken:
            self = probing && appEnvironments.contains(environment.other) ? .probeOtherEnvironment : .keepAside(reason: reason)
        case .deviceTokenNotForTopic:
            self = .keepAside(reason: reason)
        default:
            self = .none
        }
    }
}

/// What APNs's answer to a token tried in the other environment decides.
enum ProbeVerdict: Equatable, Sendable {
    /// Accepted: the device belongs to the other environment; move it there.
    case move
    /// 410 there: the token is gone; remove it (with APNs's timestamp).
    case remove(invalidSince: Int64)
    /// Anything else (refused there too, no answer): keep it aside with the first reason.
    case keepAside

    init(_ result: Result<APNsResponse, APNsError>, now: Int64) {
        guard case .success(let response) = result else {
            self = .keepAside
            return
        }
        switch response.responseClass {
        case .success: self = .move
        case .unregistered: self = .remove(invalidSince: response.timestamp ?? now)
        default: self = .keepAside
        }
    }
}
