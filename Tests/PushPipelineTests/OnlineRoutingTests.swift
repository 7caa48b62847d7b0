import APNsCore
import PipelineTestSupport
import PushStore
import Testing

@testable import PushPipeline

@Suite("Which sends of an online-first chunk go to a gateway (OnlineRouting)")
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

    @Test("no presence: everything through APNs; all present: nothing")
    func extremes() {
        #expect(OnlineRouting.split(tokens, presence: [:]) == OnlineRouting.Split(online: [], apns: Array(0..<6)))
        let all = Dictionary(uniqueKeysWithValues: tokens.map { ($0, PresenceRecord(gateway: "gw", connection: 1)) })
        #expect(OnlineRouting.split(tokens, presence: all) == OnlineRouting.Split(online: [("gw", Array(0..<6))], apns: []))
    }
}
