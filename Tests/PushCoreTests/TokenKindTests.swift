import APNsCore
import Foundation
import PushCore
import Testing

@Suite("Token kinds")
struct TokenKindTests {
    @Test("kinds by name, and the registry each lives in")
    func names() {
        #expect(TokenKind("device") == .device)
        #expect(TokenKind("voip") == .voip)
        #expect(TokenKind("push-to-start:MatchAttributes") == .pushToStart(attributesType: "MatchAttributes"))
        for bad in ["", "VOIP", "push-to-start:", "push-to-start:Has Space", "push-to-start:" + String(repeating: "A", count: 65), "fax"] {
            #expect(TokenKind(bad) == nil, "\(bad)")
        }
        #expect(TokenKind.device.registry(of: "news") == "news")
        #expect(TokenKind.voip.registry(of: "news") == "news~voip")
        #expect(TokenKind.pushToStart(attributesType: "Match.Attributes").registry(of: "news") == "news~start~Match.Attributes")
        #expect(TokenKind.pushToStart(attributesType: "X").description == "push-to-start:X")
        for kind in [TokenKind.device, .voip, .pushToStart(attributesType: "Match.Attributes")] {
            #expect(TokenKind.holdsDeviceTokens(kind.registry(of: "news")) == (kind == .device), "\(kind)")
        }
    }

    static func job(pushType: String, aps: JSONValue) throws -> PushJob {
        let json: JSONValue = [
            "app": "news", "environment": "sandbox", "audience": ["broadcast": true], "headers": ["push-type": .string(pushType)],
            "notification": ["aps": aps],
        ]
        return try PushJob.decodeAndValidate(from: json.compactData())
    }

    @Test("a job goes to VoIP tokens for a voip push, to push-to-start tokens for a Live Activity start")
    func jobKinds() throws {
        #expect(try Self.job(pushType: "alert", aps: ["alert": "hi"]).tokenKind == .device)
        #expect(try Self.job(pushType: "voip", aps: ["alert": "ring"]).tokenKind == .voip)
        let start: JSONValue = [
            "event": "start", "attributes-type": "MatchAttributes", "attributes": [:], "content-state": [:], "timestamp": 1,
            "input-push-token": 1, "input-push-channel": "dHN0LXNyY2gtY2hubA==",
        ]
        #expect(try Self.job(pushType: "liveactivity", aps: start).tokenKind == .pushToStart(attributesType: "MatchAttributes"))
        let update: JSONValue = ["event": "update", "content-state": [:], "timestamp": 1]
        #expect(try Self.job(pushType: "liveactivity", aps: update).tokenKind == .device)
    }

    @Test("a start names its attributes type; input-push-token is 1, input-push-channel a channel id")
    func startRules() {
        let cases: [(JSONValue, String)] = [
            (["event": "start", "content-state": [:], "timestamp": 1], "notification.aps.attributes-type"),
            (["event": "start", "attributes-type": "Bad Name", "timestamp": 1], "notification.aps.attributes-type"),
            (["event": "start", "attributes-type": "A", "input-push-token": 0, "timestamp": 1], "notification.aps.input-push-token"),
            (["event": "start", "attributes-type": "A", "input-push-channel": "not base64!", "timestamp": 1], "notification.aps.input-push-channel"),
        ]
        for (aps, field) in cases {
            do {
                _ = try Self.job(pushType: "liveactivity", aps: aps)
                Issue.record("accepted: \(aps)")
            } catch let error as MessageValidationError {
                #expect(error.field == field, "\(aps)")
            } catch {
                Issue.record("\(error)")
            }
        }
    }
}
