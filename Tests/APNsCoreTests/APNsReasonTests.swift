import APNsCore
import Testing

/// The reason vocabulary and its classification.
@Suite("APNs reasons")
struct APNsReasonTests {
    @Test("every documented reason round-trips through its string")
    func roundTrip() {
        #expect(APNsReason.documented.count == 38)
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
            (APNsReason.unregistered, APNsResponseClass.unregistered), (.expiredToken, .unregistered),
            (.badDeviceToken, .tokenRejected), (.deviceTokenNotForTopic, .tokenRejected),
            (.tooManyRequests, .retryable), (.internalServerError, .retryable), (.serviceUnavailable, .retryable),
            (.shutdown, .retryable), (.idleTimeout, .retryable),
            (.expiredProviderToken, .providerAuthentication), (.invalidProviderToken, .providerAuthentication),
            (.missingProviderToken, .providerAuthentication), (.badCertificate, .providerAuthentication),
            (.unrelatedKeyIDInToken, .providerAuthentication), (.badEnvironmentKeyIDInToken, .providerAuthentication),
            (.tooManyProviderTokenUpdates, .providerAuthentication),
            // Wrong the same way for every device of a job: the job is paused, not burnt.
            (.badCertificateEnvironment, .misconfiguration), (.forbidden, .misconfiguration),
            (.payloadTooLarge, .misconfiguration), (.payloadEmpty, .misconfiguration), (.badTopic, .misconfiguration),
            (.topicDisallowed, .misconfiguration), (.missingTopic, .misconfiguration), (.badPriority, .misconfiguration),
            (.badExpirationDate, .misconfiguration), (.badMessageID, .misconfiguration), (.badCollapseID, .misconfiguration),
            (.duplicateHeaders, .misconfiguration), (.invalidPushType, .misconfiguration), (.missingDeviceToken, .misconfiguration),
            (.badPath, .misconfiguration), (.methodNotAllowed, .misconfiguration),
            // Broadcast channels: the channel or the app's broadcast capability is wrong for every send.
            (.badChannelID, .misconfiguration), (.channelNotRegistered, .misconfiguration), (.missingChannelID, .misconfiguration),
            (.cannotCreateChannelConfig, .misconfiguration), (.featureNotEnabled, .misconfiguration), (.missingPushType, .misconfiguration),
        ])
    func classification(reason: APNsReason, expected: APNsResponseClass) {
        #expect(APNsResponseClass(status: reason.documentedStatus!, reason: reason) == expected)
    }

    @Test("every documented reason is classified, none as an undocumented refusal")
    func everyReasonClassified() {
        for reason in APNsReason.documented {
            #expect(APNsResponseClass(status: reason.documentedStatus!, reason: reason) != .permanent, "\(reason)")
        }
        #expect(APNsResponseClass.allCases.filter(\.isRetryable) == [.retryable])
    }

    @Test("unknown reasons fall back to the status")
    func unknownReasons() {
        #expect(APNsResponseClass(status: 200, reason: nil) == .success)
        #expect(APNsResponseClass(status: 410, reason: .unknown("Gone")) == .unregistered)
        #expect(APNsResponseClass(status: 403, reason: .unknown("New")) == .providerAuthentication)
        #expect(APNsResponseClass(status: 502, reason: nil) == .retryable)
        #expect(APNsResponseClass(status: 429, reason: .unknown("Slow")) == .retryable)
        #expect(APNsResponseClass(status: 400, reason: .unknown("Odd")) == .permanent)
    }
}
