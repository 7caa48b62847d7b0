import APNsCore
import Foundation
import PushCore
import Testing

@testable import PushPipeline

/// What the expand stage does with each kind of message, decided without Redis or Kafka.
@Suite("Expand stage: the route of a job")
struct ExpandRouteTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    static func job(_ audience: Audience, sendAt: Date? = nil) -> PushJob {
        PushJob(
            id: "job-1", app: "news", environment: .sandbox, audience: audience,
            notification: APNsPayload(["aps": .object(["alert": .string("hi")])]), headers: PushHeaders(pushType: .alert), sendAt: sendAt)
    }

    static func token(_ n: Int) -> DeviceToken { try! DeviceToken(hex: String(format: "%064x", n)) }

    @Test("a message with a shard header is a shard task, whatever the job says")
    func shardTask() {
        let route = ExpandRoute(Self.job(.broadcast, sendAt: Self.now + 3_600), shardHeader: Array("3/16".utf8), now: Self.now)
        #expect(route == .shardTask("3/16"))
    }

    @Test("each audience's expansion; a token list keeps its first occurrence of each token, in order")
    func expansions() throws {
        let tokens = [Self.token(3), Self.token(1), Self.token(3), Self.token(2), Self.token(1)]
        #expect(
            ExpandRoute(Self.job(.tokens(tokens)), shardHeader: nil, now: Self.now)
                == .job(dueAt: nil, .list([Self.token(3), Self.token(1), Self.token(2)])))
        #expect(ExpandRoute(Self.job(.openIDs(["a", "b"])), shardHeader: nil, now: Self.now) == .job(dueAt: nil, .openIDs(["a", "b"])))
        #expect(ExpandRoute(Self.job(.broadcast), shardHeader: nil, now: Self.now) == .job(dueAt: nil, .fanOut))
        #expect(ExpandRoute(Self.job(.tags(TagExpression(all: ["vip"]))), shardHeader: nil, now: Self.now) == .job(dueAt: nil, .fanOut))
        let activity = try #require(LiveActivityID("match-42"))
        #expect(ExpandRoute(Self.job(.activity(activity)), shardHeader: nil, now: Self.now) == .job(dueAt: nil, .activity(activity)))
        let channel = try #require(APNsChannelID("dHN0LXNyY2gtY2hubA=="))
        #expect(ExpandRoute(Self.job(.channel(channel)), shardHeader: nil, now: Self.now) == .job(dueAt: nil, .channel(channel)))
    }

    @Test("send-at more than half a second ahead parks the job until then, in whole milliseconds rounded up; closer or past sends now")
    func sendAt() {
        let ahead = Self.now + 90.0004
        #expect(ExpandRoute(Self.job(.broadcast, sendAt: ahead), shardHeader: nil, now: Self.now) == .job(dueAt: 1_700_000_090_001, .fanOut))
        #expect(ExpandRoute(Self.job(.broadcast, sendAt: Self.now + 0.5), shardHeader: nil, now: Self.now) == .job(dueAt: nil, .fanOut))
        #expect(ExpandRoute(Self.job(.broadcast, sendAt: Self.now - 60), shardHeader: nil, now: Self.now) == .job(dueAt: nil, .fanOut))
    }
}
