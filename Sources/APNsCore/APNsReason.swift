/// Why APNs rejected a notification: the `reason` of an error response body.
///
/// Every reason Apple documents is a case; anything else arrives as ``unknown(_:)`` so that a new
/// reason never breaks decoding.
public enum APNsReason: Hashable, Sendable, CustomStringConvertible {
    case badCollapseID
    case badDeviceToken
    case badExpirationDate
    case badMessageID
    case badPriority
    case badTopic
    case deviceTokenNotForTopic
    case duplicateHeaders
    case idleTimeout
    case invalidPushType
    case missingDeviceToken
    case missingTopic
    case payloadEmpty
    case topicDisallowed
    case badCertificate
    case badCertificateEnvironment
    case expiredProviderToken
    case forbidden
    case invalidProviderToken
    case missingProviderToken
    case unrelatedKeyIDInToken
    case badEnvironmentKeyIDInToken
    case badPath
    case methodNotAllowed
    case expiredToken
    case unregistered
    case payloadTooLarge
    case tooManyProviderTokenUpdates
    case tooManyRequests
    case internalServerError
    case serviceUnavailable
    case shutdown
    // Broadcast channels (iOS 18 Live Activities): the management API and `/4/broadcasts`.
    case badChannelID
    case cannotCreateChannelConfig
    case channelNotRegistered
    case featureNotEnabled
    case missingChannelID
    case missingPushType
    /// A reason APNs sent that Apple does not document (yet).
    case unknown(String)

    /// Every documented reason, in the order of Apple's table.
    public static let documented: [APNsReason] = [
        .badCollapseID, .badDeviceToken, .badExpirationDate, .badMessageID, .badPriority, .badTopic,
        .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType,
        .missingDeviceToken, .missingTopic, .payloadEmpty, .topicDisallowed, .badCertificate,
        .badCertificateEnvironment, .expiredProviderToken, .forbidden, .invalidProviderToken,
        .missingProviderToken, .unrelatedKeyIDInToken, .badEnvironmentKeyIDInToken, .badPath,
        .methodNotAllowed, .expiredToken, .unregistered, .payloadTooLarge,
        .tooManyProviderTokenUpdates, .tooManyRequests, .internalServerError, .serviceUnavailable,
        .shutdown, .badChannelID, .cannotCreateChannelConfig, .channelNotRegistered, .featureNotEnabled,
        .missingChannelID, .missingPushType,
    ]

    /// Decodes the `reason` string of a response body.
    public init(rawValue: String) {
        self = Self.byRawValue[rawValue] ?? .unknown(rawValue)
    }

    private static let byRawValue: [String: APNsReason] = Dictionary(
        uniqueKeysWithValues: documented.map { ($0.rawValue, $0) })

    /// The string APNs puts in the `reason` field.
    public var rawValue: String {
        switch self {
        case .badCollapseID: "BadCollapseId"
        case .badDeviceToken: "BadDeviceToken"
        case .badExpirationDate: "BadExpirationDate"
        case .badMessageID: "BadMessageId"
        case .badPriority: "BadPriority"
        case .badTopic: "BadTopic"
        case .deviceTokenNotForTopic: "DeviceTokenNotForTopic"
        case .duplicateHeaders: "DuplicateHeaders"
        case .idleTimeout: "IdleTimeout"
        case .invalidPushType: "InvalidPushType"
        case .missingDeviceToken: "MissingDeviceToken"
        case .missingTopic: "MissingTopic"
        case .payloadEmpty: "PayloadEmpty"
        case .topicDisallowed: "TopicDisallowed"
        case .badCertificate: "BadCertificate"
        case .badCertificateEnvironment: "BadCertificateEnvironment"
        case .expiredProviderToken: "ExpiredProviderToken"
        case .forbidden: "Forbidden"
        case .invalidProviderToken: "InvalidProviderToken"
        case .missingProviderToken: "MissingProviderToken"
        case .unrelatedKeyIDInToken: "UnrelatedKeyIdInToken"
        case .badEnvironmentKeyIDInToken: "BadEnvironmentKeyIdInToken"
        case .badPath: "BadPath"
        case .methodNotAllowed: "MethodNotAllowed"
        case .expiredToken: "ExpiredToken"
        case .unregistered: "Unregistered"
        case .payloadTooLarge: "PayloadTooLarge"
        case .tooManyProviderTokenUpdates: "TooManyProviderTokenUpdates"
        case .tooManyRequests: "TooManyRequests"
        case .internalServerError: "InternalServerError"
        case .serviceUnavailable: "ServiceUnavailable"
        case .shutdown: "Shutdown"
        case .badChannelID: "BadChannelId"
        case .cannotCreateChannelConfig: "CannotCreateChannelConfig"
        case .channelNotRegistered: "ChannelNotRegistered"
        case .featureNotEnabled: "FeatureNotEnabled"
        case .missingChannelID: "MissingChannelId"
        case .missingPushType: "MissingPushType"
        case .unknown(let raw): raw
        }
    }

    /// The HTTP status Apple documents for this reason; `nil` for an unknown reason.
    public var documentedStatus: Int? {
        switch self {
        case .badCollapseID, .badDeviceToken, .badExpirationDate, .badMessageID, .badPriority,
            .badTopic, .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType,
            .missingDeviceToken, .missingTopic, .payloadEmpty, .topicDisallowed, .badChannelID,
            .cannotCreateChannelConfig, .channelNotRegistered, .featureNotEnabled, .missingChannelID, .missingPushType:
            400
        case .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden,
            .invalidProviderToken, .missingProviderToken, .unrelatedKeyIDInToken,
            .badEnvironmentKeyIDInToken:
            403
        case .badPath: 404
        case .methodNotAllowed: 405
        case .expiredToken, .unregistered: 410
        case .payloadTooLarge: 413
        case .tooManyProviderTokenUpdates, .tooManyRequests: 429
        case .internalServerError: 500
        case .serviceUnavailable, .shutdown: 503
        case .unknown: nil
        }
    }

    public var description: String { rawValue }
}
