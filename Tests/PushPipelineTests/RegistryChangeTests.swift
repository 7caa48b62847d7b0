import APNs
import APNsCore
import Testing

@testable import PushPipeline

@Suite("Registry change rules")
struct RegistryChangeTests {
    func change(_ reason: String, app: [APNsEnvironment] = [.sandbox, .production], probing: Bool = true) -> RegistryChange {
        RegistryChange(reason: reason, invalidSince: 7, appEnvironments: app, environment: .production, probing: probing)
    }

    @Test("only a 410 removes a token")
    func onlyGoneRemoves() {
        #expect(change("Unregistered") == .remove(invalidSince: 7))
        #expect(change("ExpiredToken") == .remove(invalidSince: 7))
        for reason in ["BadDeviceToken", "DeviceTokenNotForTopic", "BadTopic", "TopicDisallowed", "Odd", "HTTP400"] {
            if case .remove = change(reason) { Issue.record("\(reason) must never remove a token") }
        }
    }

    @Test("BadDeviceToken is tried in the other environment where the app has it and probing is on")
    func badDeviceToken() {
        #expect(change("BadDeviceToken") == .probeOtherEnvironment)
        #expect(change("BadDeviceToken", app: [.production]) == .keepAside(reason: "BadDeviceToken"))
        #expect(change("BadDeviceToken", probing: false) == .keepAside(reason: "BadDeviceToken"))
    }

    @Test("DeviceTokenNotForTopic keeps the token aside; other reasons change nothing")
    func others() {
        #expect(change("DeviceTokenNotForTopic") == .keepAside(reason: "DeviceTokenNotForTopic"))
        #expect(change("TopicDisallowed") == RegistryChange.none)
        #expect(change("Odd") == RegistryChange.none)
    }

    @Test("the other environment's answer decides: accepted moves, 410 removes, anything else keeps aside")
    func probeVerdicts() {
        func response(_ status: Int, _ reason: APNsReason?, _ timestamp: Int64? = nil) -> Result<APNsResponse, APNsError> {
            .success(APNsResponse(status: status, apnsID: nil, reason: reason, timestamp: timestamp, attempts: 1))
        }
        #expect(ProbeVerdict(response(200, nil), now: 1) == .move)
        #expect(ProbeVerdict(response(410, .unregistered, 99), now: 1) == .remove(invalidSince: 99))
        #expect(ProbeVerdict(response(410, .expiredToken), now: 1) == .remove(invalidSince: 1))
        #expect(ProbeVerdict(response(400, .badDeviceToken), now: 1) == .keepAside)
        #expect(ProbeVerdict(response(503, .serviceUnavailable), now: 1) == .keepAside)
        #expect(ProbeVerdict(.failure(APNsError(.timeout)), now: 1) == .keepAside)
    }
}
