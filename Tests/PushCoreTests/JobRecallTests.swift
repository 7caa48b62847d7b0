import APNsCore
import Foundation
import PushCore
import Testing

/// ``PushJob/recall(id:overwriteWith:publishedAt:now:window:)``: the job that recalls a
/// campaign, and when a campaign cannot be recalled.
struct JobRecallTests {
    static let published = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: TimeInterval = 24 * 3600

    static func campaign(_ change: (inout JSONValue) -> Void = { _ in }) throws -> PushJob {
        var json = Fixtures.job
        json = json.setting("spring-sale", at: ["id"]).setting("Spring sale", at: ["name"])
        json = json.setting(["rate-per-second": 500], at: ["throttle"])
        change(&json)
        return try Fixtures.decode(json)
    }

    static func recall(
        _ campaign: PushJob, overwrite: (notification: APNsPayload, headers: PushHeaders?)? = nil, after age: TimeInterval = 3600
    ) throws(RecallRefusal) -> PushJob {
        try campaign.recall(id: "r-1", overwriteWith: overwrite, publishedAt: published, now: published + age, window: day)
    }

    @Test func aWithdrawGoesToTheCampaignsAudienceAsABackgroundPushNamingIt() throws {
        let campaign = try Self.campaign()
        let recall = try Self.recall(campaign)
        #expect(recall.id == "r-1")
        #expect(recall.app == campaign.app && recall.environment == campaign.environment && recall.audience == campaign.audience)
        #expect(recall.throttle == campaign.throttle, "throttled as the campaign was")
        #expect(recall.headers == PushHeaders(pushType: .background, priority: .considerDevicePower))
        #expect(recall.notification == APNsPayload(["aps": ["content-available": 1], "pushfleet": ["withdraw": "spring-sale"]]))
        #expect(recall.recall == JobRecall(jobID: "spring-sale", mode: .withdraw))
        #expect(recall.name == "Recall: Spring sale")
        #expect(recall.collapseID(jobID: "r-1") == nil)
        try recall.validate()
        let widget = try Self.campaign { $0 = $0.setting("com.example.news.widget", at: ["headers", "topic"]) }
        #expect(try Self.recall(widget).headers.topic == "com.example.news.widget", "withdrawn on the topic it was shown on")
        #expect(try Self.recall(campaign).headers.topic == nil, "the app's bundle id")
        // The JSON round trip keeps the link.
        #expect(try Fixtures.decode(recall.jsonValue) == recall)
    }

    @Test func anOverwriteCarriesTheCampaignsCollapseIDAndTheRecallsReceiptKey() throws {
        let campaign = try Self.campaign()
        let content = APNsPayload(["aps": ["alert": "Spring sale ends tonight"]])
        let recall = try Self.recall(campaign, overwrite: (content, nil))
        #expect(recall.recall == JobRecall(jobID: "spring-sale", mode: .overwrite))
        #expect(recall.headers.pushType == .alert)
        #expect(recall.headers.collapseID == "spring-sale")
        #expect(recall.collapseID(jobID: "r-1") == "spring-sale", "not the recall's own id")
        #expect(recall.notification.object["pushfleet"] == ["job": "r-1"])
        #expect(recall.notification.aps?["alert"] == "Spring sale ends tonight")
        #expect(recall.name == "Overwrite: Spring sale")
        try recall.validate()

        let own = try Self.campaign { $0 = $0.setting("sale-7", at: ["headers", "collapse-id"]) }
        #expect(try Self.recall(own, overwrite: (content, nil)).headers.collapseID == "sale-7", "the producer's own collapse id")
    }

    @Test func refusals() throws {
        let campaign = try Self.campaign()
        func refusal(_ body: () throws -> PushJob) -> RecallRefusal? {
            do {
                _ = try body()
                return nil
            } catch {
                return error as? RecallRefusal
            }
        }
        #expect(refusal { try Self.recall(campaign, after: Self.day) } == nil, "the window's last second still counts")
        #expect(refusal { try Self.recall(campaign, after: Self.day + 1) }?.code == .windowPassed)
        #expect(
            refusal { try campaign.recall(id: "r", overwriteWith: nil, publishedAt: nil, now: Self.published, window: Self.day) }?.code
                == .windowPassed)
        let recall = try Self.recall(campaign)
        #expect(refusal { try Self.recall(recall) }?.code == .isRecall)
        var onChannel = campaign
        onChannel.audience = .channel(try #require(APNsChannelID("dGVzdA==")))
        #expect(refusal { try Self.recall(onChannel) }?.code == .audience)
        var activity = campaign
        activity.audience = .activity(try #require(LiveActivityID("match-7")))
        #expect(refusal { try Self.recall(activity) }?.code == .audience)
        let plain = try Self.campaign { $0 = $0.setting(false, at: ["collapse-by-job"]) }
        #expect(refusal { try Self.recall(plain) } == nil, "a withdraw needs no collapse id")
        let content = APNsPayload(["aps": ["alert": "x"]])
        #expect(refusal { try Self.recall(plain, overwrite: (content, nil)) }?.code == .noCollapseID)
        let silent = try Self.campaign {
            $0 = $0.setting(["push-type": "background"], at: ["headers"]).setting(["aps": ["content-available": 1]], at: ["notification"])
        }
        #expect(refusal { try Self.recall(silent, overwrite: (content, nil)) }?.code == .noCollapseID)
        let background = refusal { try Self.recall(campaign, overwrite: (content, PushHeaders(pushType: .background))) }
        #expect(background?.code == .notAlert && background?.field == "overwrite-with.headers.push-type")
        let reserved = refusal { try Self.recall(campaign, overwrite: (APNsPayload(["aps": ["alert": "x"], "pushfleet": [:]]), nil)) }
        #expect(reserved?.code == .reservedKey && reserved?.field == "overwrite-with.notification.pushfleet")
        // What the campaign is or when it went decides a conflict; the new content, bad input.
        let windowPassed = try #require(refusal { try Self.recall(campaign, after: Self.day + 1) })
        #expect(windowPassed.concernsCampaign && windowPassed.field == "job")
        #expect(try #require(refusal { try Self.recall(plain, overwrite: (content, nil)) }).concernsCampaign)
        #expect(try #require(refusal { try Self.recall(recall) }).concernsCampaign)
        #expect(try #require(refusal { try Self.recall(onChannel) }).concernsCampaign)
        #expect(background?.concernsCampaign == false && reserved?.concernsCampaign == false)
    }

    @Test func aStoredSpecNamesTheCampaignItRecalls() throws {
        let recall = try Self.recall(try Self.campaign())
        #expect(JobRecall.of(spec: recall.jsonValue) == JobRecall(jobID: "spring-sale", mode: .withdraw))
        #expect(JobRecall.of(spec: try Self.campaign().jsonValue) == nil, "a campaign recalls nothing")
        #expect(JobRecall.of(spec: recall.jsonValue.setting("erase", at: ["recall", "mode"])) == nil, "a link that does not decode")
        #expect(JobRecall.of(spec: nil) == nil)
    }

    @Test func aRecallJobIsCheckedAsOne() throws {
        var json = Fixtures.job.setting(["job": "spring-sale", "mode": "withdraw"], at: ["recall"])
        #expect(Fixtures.rejection(json)?.field == "headers.push-type", "a withdraw is a background push")
        json = json.setting(["push-type": "background"], at: ["headers"]).setting(["aps": ["content-available": 1]], at: ["notification"])
        #expect(Fixtures.rejection(json)?.field == "notification.pushfleet.withdraw", "its payload names the campaign")
        json = json.setting(["aps": ["content-available": 1], "pushfleet": ["withdraw": "spring-sale"]], at: ["notification"])
        #expect(Fixtures.rejection(json) == nil)
        #expect(Fixtures.rejection(json.setting("erase", at: ["recall", "mode"]))?.field == "recall.mode")
        #expect(Fixtures.rejection(json.setting(["job": "x"], at: ["recall"]))?.field == "recall.mode", "a missing mode")

        var overwrite = Fixtures.job.setting(["job": "spring-sale", "mode": "overwrite"], at: ["recall"])
        #expect(Fixtures.rejection(overwrite)?.field == "headers.collapse-id")
        overwrite = overwrite.setting("spring-sale", at: ["headers", "collapse-id"])
        #expect(Fixtures.rejection(overwrite) == nil)
    }

    @Test func overwriteContentIsCheckedForShape() throws {
        let content = try PushJob.overwriteContent(["notification": ["aps": ["alert": "x"]]], at: "overwrite-with")
        #expect(content.notification == APNsPayload(["aps": ["alert": "x"]]) && content.headers == nil)
        func field(_ object: JSONObject) -> String? {
            do {
                _ = try PushJob.overwriteContent(object, at: "overwrite-with")
                return nil
            } catch {
                return error.field
            }
        }
        #expect(field([:]) == "overwrite-with.notification")
        #expect(field(["notification": ["aps": ["alert": "x"]], "audience": ["broadcast": true]]) == "overwrite-with.audience")
        #expect(
            field(["notification": ["aps": ["alert": "x"]], "headers": ["push-type": "alert", "collapse-id": "mine"]])
                == "overwrite-with.headers.collapse-id")
        #expect(field(["notification": ["aps": ["alert": "x"]], "headers": ["push-type": "teleport"]]) == "overwrite-with.headers.push-type")
    }
}
