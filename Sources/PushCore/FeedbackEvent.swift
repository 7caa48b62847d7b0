public import APNsCore
public import Foundation

/// One message of `push.feedback`: a registry change APNs's answer calls for.
///
/// The feedback worker removes the token for a 410 reason (`Unregistered`, `ExpiredToken`)
/// unless it was registered again after ``invalidSince``, and keeps it aside as suspect for
/// `BadDeviceToken` and `DeviceTokenNotForTopic` (see `schemas/push-feedback.schema.json`).
public struct FeedbackEvent: Hashable, Sendable {
    public var app: String
    public var token: DeviceToken
    public var environment: APNsEnvironment
    /// APNs's reason (`Unregistered`, `BadDeviceToken`, `ExpiredToken`, `DeviceTokenNotForTopic`).
    public var reason: String
    /// For 410: when APNs says the token stopped being valid, in milliseconds since 1970;
    /// otherwise when the worker got the answer.
    public var invalidSince: Int64
    /// The job whose notification found out, for its statistics.
    public var jobID: String?
    /// The kind of the token (its registry, ``TokenKind/registry(of:)``).
    public var kind: TokenKind

    public init(
        app: String, token: DeviceToken, environment: APNsEnvironment, reason: String, invalidSince: Int64, jobID: String?,
        kind: TokenKind = .device
    ) {
        self.kind = kind
        self.app = app
        self.token = token
        self.environment = environment
        self.reason = reason
        self.invalidSince = invalidSince
        self.jobID = jobID
    }
}
