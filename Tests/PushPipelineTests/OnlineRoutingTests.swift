import APNsCore
import PipelineTestSupport
import PushStore
import Testing

@testable import PushPipeline

@Suite("Which sends of an online chunk go to a gateway, and how long an inbox keeps them (OnlineRouting)")
struct OnlineRoutingTests {
    let tokens = (1...6).map(PipelineStack.token)

    @Test("a device with presence goes to its record's gateway, the others to APNs, in their order")
    func split() {
        let presence = [
            tokens[1]: PresenceRecord(gateway: "gw-b", connection: 4),
            tokens[2]: PresenceRecord(gateway: "gw-a", connection: 9),
            tokens[4]: PresenceRecord(gateway: "gw-b", connection: 5),
        ]
        let split = OnlineRouting.split(tokens, presence: presence)
        #expect(split.online.map(\.gateway) == ["gw-a", "gw-b"])
        #expect(split.online.map(\.indexes) == [[2], [1, 4]])
        #expect(split.apns == [0, 3, 5])
    }

    @Test("an inbox keeps a message until the job's expiration, at most its time to live; an expired job keeps nothing")
    func inboxExpiry() {
        let now: Int64 = 1_800_000_000_000
        let day = Duration.seconds(86_400)
        #expect(OnlineRouting.inboxExpiry(expiration: nil, now: now, timeToLive: day) == now + 86_400_000)
        #expect(OnlineRouting.inboxExpiry(expiration: 0, now: now, timeToLive: day) == now + 86_400_000)
        #expect(OnlineRouting.inboxExpiry(expiration: 1_800_000_060, now: now, timeToLive: day) == now + 60_000)
        #expect(OnlineRouting.inboxExpiry(expiration: 1_900_000_000, now: now, timeToLive: day) == now + 86_400_000)
        #expect(OnlineRouting.inboxExpiry(expiration: Int.max, now: now, timeToLive: day) == now + 86_400_000)
        #expect(OnlineRouting.inboxExpiry(expiration: 1_800_000_000, now: now, timeToLive: day) == nil)
        #expect(OnlineRouting.inboxExpiry(expiration: 1, now: now, timeToLive: day) == nil)
    }

    @Test("no presence: everything through APNs; all present: nothing")
    func extremes() {
        #expect(OnlineRouting.split(tokens, presence: [:]) == OnlineRouting.Split(online: [], apns: Array(0..<6)))
        let all = Dictionary(uniqueKeysWithValues: tokens.map { ($0, PresenceRecord(gateway: "gw", connection: 1)) })
        #expect(OnlineRouting.split(tokens, presence: all) == OnlineRouting.Split(online: [("gw", Array(0..<6))], apns: []))
    }
}
