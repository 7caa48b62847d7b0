/// What an APNs answer means for the notification and the device token it was sent to: the one
/// classification of APNs's statuses and reasons. The APNs client retries by it; the pipeline's
/// settlement decides from it what to record, remove, keep aside, resend or stop.
public enum APNsResponseClass: String, Hashable, Sendable, Codable, CaseIterable {
    /// APNs accepted the notification.
    case success
    /// 410: the token is gone (the app was removed from the device, or the token expired). The
    /// only answer that may remove a token from the registry.
    case unregistered
    /// 400 `BadDeviceToken` or `DeviceTokenNotForTopic`: the token does not fit this
    /// environment or topic. Usually a misconfiguration (a sandbox token sent to production, a
    /// wrong topic), so the token is kept aside, never removed.
    case tokenRejected
    /// Nothing is wrong with the notification; send it again later.
    case retryable
    /// The provider's credential (JWT or certificate) was refused; fix it before sending more.
    case providerAuthentication
    /// The request is wrong the same way for every device of the job: its topic, push type,
    /// headers or payload, or the certificate's environment. Sending the rest of the job would
    /// fail the same way, so the job is stopped.
    case misconfiguration
    /// Refused for a reason APNs does not document; not retried.
    case permanent

    /// Classifies an APNs answer by its reason, falling back to the status for unknown reasons.
    public init(status: Int, reason: APNsReason?) {
        if (200..<300).contains(status) {
            self = .success
            return
        }
        switch reason {
        case .unregistered, .expiredToken:
            self = .unregistered
        case .badDeviceToken, .deviceTokenNotForTopic:
            self = .tokenRejected
        case .tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown, .idleTimeout:
            self = .retryable
        case .badCertificate, .expiredProviderToken, .invalidProviderToken, .missingProviderToken,
            .unrelatedKeyIDInToken, .badEnvironmentKeyIDInToken, .tooManyProviderTokenUpdates:
            self = .providerAuthentication
        case .badCertificateEnvironment, .forbidden, .badCollapseID, .badExpirationDate, .badMessageID,
            .badPriority, .badTopic, .duplicateHeaders, .invalidPushType, .missingDeviceToken, .missingTopic,
            .payloadEmpty, .topicDisallowed, .badPath, .methodNotAllowed, .payloadTooLarge, .badChannelID,
            .cannotCreateChannelConfig, .channelNotRegistered, .featureNotEnabled, .missingChannelID, .missingPushType:
            self = .misconfiguration
        case .unknown, .none:
            self = Self(status: status)
        }
    }

    private init(status: Int) {
        switch status {
        case 410: self = .unregistered
        case 403: self = .providerAuthentication
        case 429, 500...599: self = .retryable
        default: self = .permanent
        }
    }

    /// Whether sending the same notification again may succeed.
    public var isRetryable: Bool { self == .retryable }
}
