import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import PipelineTestSupport
import PushCore
import PushJobs
import PushStore
import Testing

/// Device, VoIP and push-to-start tokens of the same users, each kind in its own registry: a job
/// reaches the kind its push calls for, and APNs's feedback changes only that kind's registry.
@Suite("Token kinds end to end", .serialized)
struct TokenKindPipelineTests {
    typealias Stack = PipelineStack

    static func job(id: String, audience: Audience, pushType: APNsPushType, aps: JSONObject) -> PushJob {
        PushJob(
            id: id, app: Stack.app, environment: .sandbox, audience: audience, notification: APNsPayload(["aps": .object(aps)]),
            headers: PushHeaders(pushType: pushType))
    }

    @Test("a VoIP push reaches VoIP tokens, a Live Activity start the start tokens of its type; a 410 removes a VoIP token only")
    func kindsAreAddressedApart() async throws {
        let devices = (0..<30).map(Stack.token)
        let voip = (100..<130).map(Stack.token)
        let matchStarts = (200..<210).map(Stack.token)
        let orderStarts = (300..<305).map(Stack.token)
        let goneVoIP = voip[0]
        try await Stack.with(simulator: { $0.devices.unregistered = [goneVoIP.hex: 5_000] }) { stack in
            let registry = stack.registry
            func bind(_ tokens: [DeviceToken], kind: TokenKind) async throws {
                try await registry.bind(
                    tokens.enumerated().map { index, token in
                        DeviceRegistration(token: token, environment: .sandbox, openID: "user-\(index)", tags: ["fans"], registeredAt: 1_000)
                    }, app: kind.registry(of: Stack.app))
            }
            try await bind(devices, kind: .device)
            try await bind(voip, kind: .voip)
            try await bind(matchStarts, kind: .pushToStart(attributesType: "MatchAttributes"))
            try await bind(orderStarts, kind: .pushToStart(attributesType: "OrderAttributes"))

            try await stack.withWorker { _ in
                try await stack.publish(Self.job(id: "ring", audience: .tags(TagExpression(all: ["fans"])), pushType: .voip, aps: ["alert": "ring"]))
                let ring = try await eventually("the VoIP job completes") {
                    try await stack.report("ring")
                } until: {
                    $0.isComplete && $0.removed == 1
                }
                #expect(ring.targeted == voip.count && ring.accepted == voip.count - 1, "\(ring)")
                #expect(ring.failedByReason == ["Unregistered": 1])

                let start: JSONObject = [
                    "event": "start", "attributes-type": "MatchAttributes", "attributes": ["match": "m-1"],
                    "content-state": ["home": 0, "away": 0], "timestamp": 1_700_000_000, "input-push-token": 1,
                ]
                try await stack.publish(Self.job(id: "kick-off", audience: .broadcast, pushType: .liveactivity, aps: start))
                let kickOff = try await eventually("the start job completes") {
                    try await stack.report("kick-off")
                } until: {
                    $0.isComplete
                }
                #expect(kickOff.targeted == matchStarts.count && kickOff.accepted == matchStarts.count, "\(kickOff)")

                try await stack.publish(Self.job(id: "user-3", audience: .openIDs(["user-3"]), pushType: .voip, aps: ["alert": "ring"]))
                let one = try await eventually("the openid job completes") {
                    try await stack.report("user-3")
                } until: {
                    $0.isComplete
                }
                #expect(one.accepted == 1)
            }
            let seen = try await stack.simulator.counters()
            let reached = Set(seen.acceptedPerToken.keys)
            #expect(reached == Set((voip.dropFirst() + matchStarts).map(\.hex)), "only the kinds each job called for")
            #expect(seen.acceptedPerToken[voip[3].hex] == 2, "user-3's VoIP token: the tag job and the openid job")
            #expect(try await registry.device(app: TokenKind.voip.registry(of: Stack.app), token: goneVoIP) == nil)
            #expect(try await registry.deviceCount(app: TokenKind.voip.registry(of: Stack.app)).sandbox == voip.count - 1)
            #expect(try await registry.deviceCount(app: Stack.app).sandbox == devices.count, "the device registry is untouched")
            #expect(
                try await registry.deviceCount(app: TokenKind.pushToStart(attributesType: "OrderAttributes").registry(of: Stack.app)).sandbox
                    == orderStarts.count)
        }
    }
}
