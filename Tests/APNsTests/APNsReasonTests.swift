import APNsCore
import Testing

/// The reason vocabulary and its classification.
@Suite("APNs reasons")
struct APNsReasonTests {
    @Test("every documented reason round-trips through its string")
    func roundTrip() {
        #expect(APNsReason.documented.count == 32)
        for reason in APNsReason.documented {
            #expect(APNsReason(rawValue: reason.rawValue) == reason)
            #expect(reason.documentedStatus != nil)
        }
        #expect(APNsReason(rawValue: "SomethingNew") == .unknown("SomethingNew"))
        #expect(APNsReason.unknown("SomethingNew").documentedStatus == nil)
    }

    @Test(
        "classification by reason",
        arguments: [
            (APNsReason.badDeviceToken, APNsResponseClass.invalidToken), (.unregistered, .invalidToken),
            (.expiredToken, .invalidToken), (.deviceTokenNotForTopic, .invalidToken),
            (.tooManyRequests, .retryable), (.internalServerError, .retryable), (.serviceUnavailable, .retryable),
            (.shutdown, .retryable), (.idleTimeout, .retryable),
            (.expiredProviderToken, .providerAuthentication), (.invalidProviderToken, .providerAuthentication),
            (.missingProviderToken, .providerAuthentication), (.badCertificate, .providerAuthentication),
            (.badCertificateEnvironment, .providerAuthentication), (.forbidden, .providerAuthentication),
            (.unrelatedKeyIDInToken, .providerAuthentication), (.badEnvironmentKeyIDInToken, .providerAuthentication),
            (.tooManyProviderTokenUpdates, .providerAuthentication),
            (.payloadTooLarge, .permanent), (.payloadEmpty, .permanent), (.badTopic, .permanent),
            (.topicDisallowed, .permanent), (.missingTopic, .permanent), (.badPriority, .permanent),
            (.badExpirationDate, .permanent), (.badMessageID, .permanent), (.badCollapseID, .permanent),
            (.duplicateHeaders, .permanent), (.invalidPushType, .permanent), (.missingDeviceToken, .permanent),
            (.badPath, .permanent), (.methodNotAllowed, .permanent),
        ])
    func classification(reason: APNsReason, expected: APNsResponseClass) {
        #expect(APNsResponseClass(status: reason.documentedStatus!, reason: reason) == expected)
    }

    @Test("unknown reasons fall back to the status")
    func unknownReasons() {
        #expect(APNsResponseClass(status: 200, reason: nil) == .success)
        #expect(APNsResponseClass(status: 410, reason: .unknown("Gone")) == .invalidToken)
        #expect(APNsResponseClass(status: 403, reason: .unknown("New")) == .providerAuthentication)
        #expect(APNsResponseClass(status: 502, reason: nil) == .retryable)
        #expect(APNsResponseClass(status: 429, reason: .unknown("Slow")) == .retryable)
        #expect(APNsResponseClass(status: 400, reason: .unknown("Odd")) == .permanent)
    }
}
