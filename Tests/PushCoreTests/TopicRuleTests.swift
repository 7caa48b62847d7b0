import APNsCore
import PushCore
import Testing

/// A job's `headers.topic` against its app: its bundle id or an extra topic, with the push
/// type's suffix.
@Suite("Topic at the door")
struct TopicRuleTests {
    static let bundleIDs = ["com.example.news", "com.example.news.beta"]

    func job(_ pushType: APNsPushType, topic: String?) -> PushJob {
        PushJob(
            app: "news", environment: .production, audience: .broadcast, notification: APNsPayload(["aps": ["alert": "x"]]),
            headers: PushHeaders(pushType: pushType, topic: topic))
    }

    @Test(
        "allowed: no topic, the bundle id or an extra one with the push type's suffix",
        arguments: [
            (APNsPushType.alert, nil), (.alert, "com.example.news"), (.alert, "com.example.news.beta"),
            (.voip, "com.example.news.voip"), (.voip, "com.example.news.beta.voip"),
            (.complication, "com.example.news.complication"), (.liveactivity, "com.example.news.push-type.liveactivity"),
            (.background, "com.example.news"),
        ] as [(APNsPushType, String?)])
    func allowed(pushType: APNsPushType, topic: String?) throws {
        try job(pushType, topic: topic).validateTopic(bundleIDs: Self.bundleIDs)
    }

    @Test(
        "refused, naming headers.topic and the topics allowed",
        arguments: [
            (APNsPushType.alert, "com.example.shop"), (.alert, "com.example.news.voip"), (.voip, "com.example.news"),
            (.liveactivity, "com.example.news"), (.alert, "com.example.NEWS"), (.alert, "com.example.news "),
        ] as [(APNsPushType, String)])
    func refused(pushType: APNsPushType, topic: String) {
        #expect {
            try job(pushType, topic: topic).validateTopic(bundleIDs: Self.bundleIDs)
        } throws: { error in
            guard let error = error as? MessageValidationError else { return false }
            return error.field == "headers.topic" && error.code == .topicNotAllowed
                && error.message.contains(pushType.topic(forBundleID: "com.example.news"))
        }
    }

    @Test("the topic a job goes out with, and whether it is the app's own")
    func ownTopic() {
        #expect(job(.voip, topic: nil).topic(bundleID: "com.example.news") == "com.example.news.voip")
        #expect(job(.voip, topic: nil).usesOwnTopic(bundleID: "com.example.news"))
        #expect(job(.alert, topic: "com.example.news").usesOwnTopic(bundleID: "com.example.news"))
        #expect(!job(.alert, topic: "com.example.news.beta").usesOwnTopic(bundleID: "com.example.news"))
    }
}
