import APNsCore
import PushCore
import PushJobs
import Testing

@Suite("Audience estimates")
struct AudienceEstimateTests {
    static let tags = ["sports": 400, "news": 900, "muted": 50]

    static func estimate(_ audience: Audience, devices: Int = 1_000, activity: Int? = nil) -> AudienceEstimate {
        AudienceEstimate(audience, environmentDevices: devices, tagCounts: tags, activityTokens: activity)
    }

    @Test("exact where the registry counts them; an upper bound for openids and tags; unknown for a channel")
    func estimates() throws {
        let token = try DeviceToken(hex: "0a0b")
        #expect(Self.estimate(.broadcast) == AudienceEstimate(devices: 1_000, isExact: true))
        #expect(Self.estimate(.tokens([token, token])) == AudienceEstimate(devices: 1, isExact: true))
        #expect(Self.estimate(.openIDs(["a", "b", "a"])) == AudienceEstimate(devices: 2, isExact: false))
        #expect(Self.estimate(.openIDs(["a", "b"]), devices: 1) == AudienceEstimate(devices: 1, isExact: false))
        #expect(Self.estimate(.tags(TagExpression(all: ["sports", "news"]))) == AudienceEstimate(devices: 400, isExact: false))
        #expect(Self.estimate(.tags(TagExpression(any: ["sports", "muted"]))) == AudienceEstimate(devices: 450, isExact: false))
        #expect(
            Self.estimate(.tags(TagExpression(any: ["sports", "news"]))) == AudienceEstimate(devices: 1_000, isExact: false),
            "never above the devices")
        #expect(Self.estimate(.tags(TagExpression(all: ["unknown"]))) == AudienceEstimate(devices: 0, isExact: true), "a tag no device carries")
        #expect(Self.estimate(.channel(APNsChannelID("YQ==")!)) == AudienceEstimate(devices: nil, isExact: false))
        #expect(Self.estimate(.activity(LiveActivityID("a-1")!), activity: 7) == AudienceEstimate(devices: 7, isExact: true))
    }

    @Test("an area: at most the devices located in it, the tags' bound and the environment's devices")
    func areas() {
        let area = GeoArea(center: GeoPoint(latitude: 1, longitude: 2), radiusKilometres: 3)
        func estimate(_ tags: TagExpression?, located: Int) -> AudienceEstimate {
            AudienceEstimate(.area(area, tags: tags), environmentDevices: 1_000, tagCounts: Self.tags, locatedDevices: located)
        }
        #expect(estimate(nil, located: 600) == AudienceEstimate(devices: 600, isExact: false))
        #expect(estimate(nil, located: 1_500) == AudienceEstimate(devices: 1_000, isExact: false), "located in both environments")
        #expect(estimate(TagExpression(all: ["muted"]), located: 600) == AudienceEstimate(devices: 50, isExact: false))
        #expect(estimate(TagExpression(all: ["sports"]), located: 0) == AudienceEstimate(devices: 0, isExact: true))
    }
}
