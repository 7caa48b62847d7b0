/// What a sender should do with the outcome of one notification.
public enum APNsResponseClass: String, Hashable, Sendable, Codable, CaseIterable {
    /// APNs accepted the notification.
    case success
    /// The device token is no longer valid for this app: remove it from the registry.
    case invalidToken
    /// Nothing is wrong with the notification; send it again later.
    case retryable
    /// The provider's credential (JWT or certificate) was refused; fix it before sending more.
    case providerAuthentication
    /// The notification itself is wrong (payload, topic, headers); sending it again cannot help.
    case permanent

    /// Classifies an APNs answer by its reason, falling back to the status for unknown reasons.
    public init(status: Int, reason: APNsReason?) {
        if status == 200 {
            self = .success
            return
        }
        switch reason {
        case .badDeviceToken, .unregistered, .expiredToken, .deviceTokenNotForTopic:
            self = .invalidToken
        case .tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown, .idleTimeout:
            self = .retryable
        case .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden,
            .invalidProviderToken, .missingProviderToken, .unrelatedKeyIDInToken,
            .badEnvironmentKeyIDInToken, .tooManyProviderTokenUpdates:
            self = .providerAuthentication
        case .badCollapseID, .badExpirationDate, .badMessageID, .badPriority, .badTopic,
            .duplicateHeaders, .invalidPushType, .missingDeviceToken, .missingTopic, .payloadEmpty,
            .topicDisallowed, .badPath, .methodNotAllowed, .payloadTooLarge:
            self = .permanent
        case .unknown, .none:
            self = Self(status: status)
        }
    }

    private init(status: Int) {
        switch status {
        case 410: self = .invalidToken
        case 403: self = .providerAuthentication
        case 429, 500...599: self = .retryable
        default: self = .permanent
        }
    }
}
