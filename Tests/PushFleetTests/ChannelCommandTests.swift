import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import PipelineTestSupport
import PushCore
import PushStore
import Testing

/// `pushfleet channels` against the stack's simulator, which serves Apple's channel management API.
@Suite("pushfleet channels", .serialized)
struct ChannelCommandTests {
    static let app = EmbeddedStack.app

    @Test("create, list (kept and at APNs), delete; an unknown channel exits 2, a bad policy is a usage error")
    func createListDelete() async throws {
        try await PipelineStack.with { stack in
            let target = ["--app", Self.app, "--environment", "sandbox", "--config", stack.configurationPath]
            let created = try await CLIProcess.run(["channels", "create", "--storage-policy", "most-recent", "--json"] + target)
            #expect(created.status == 0, "\(created.standardError)")
            let json = try JSONValue(parsing: Data(created.standardOutput.utf8))
            let id = try #require(json.objectValue?["channel"]?.stringValue)
            #expect(json.objectValue?["message-storage-policy"] == "most-recent")
            let channelID = try #require(APNsChannelID(id))
            #expect(try await ChannelStore(client: stack.redis).channel(app: Self.app, environment: .sandbox, id: channelID) != nil)

            let listed = try await CLIProcess.run(["channels", "list"] + target)
            #expect(listed.status == 0 && listed.standardOutput.contains(id) && listed.standardOutput.contains("storage most-recent"))
            let atAPNs = try await CLIProcess.run(["channels", "list", "--at-apns", "--json"] + target)
            #expect(atAPNs.status == 0, "\(atAPNs.standardError)")
            #expect(atAPNs.standardOutput.contains(#""kept":true"#) && atAPNs.standardOutput.contains(id))
            #expect(try await stack.simulator.counters().channels == 1)

            let badPolicy = try await CLIProcess.run(["channels", "create", "--storage-policy", "forever"] + target)
            #expect(badPolicy.status == 64 && badPolicy.standardError.contains("--storage-policy"))

            let deleted = try await CLIProcess.run(["channels", "delete", id] + target)
            #expect(deleted.status == 0, "\(deleted.standardError)")
            #expect(try await stack.simulator.counters().channels == 0)
            let again = try await CLIProcess.run(["channels", "delete", id] + target)
            #expect(again.status == 2 && again.standardError.contains("is not a channel of app"), "\(again.standardError)")
            #expect(try await CLIProcess.run(["channels", "list"] + target).standardOutput.isEmpty)
        }
    }

    @Test("devices bind, export and unbind --kind work on the kind's own registry")
    func tokenKinds() async throws {
        try await PipelineStack.with { stack in
            let config = ["--app", Self.app, "--config", stack.configurationPath]
            let token = PipelineStack.token(5).hex
            let bound = try await CLIProcess.run(
                ["devices", "bind", token, "--environment", "sandbox", "--openid", "user-5", "--kind", "voip", "--json"] + config)
            #expect(bound.status == 0, "\(bound.standardError)")
            #expect(try await stack.registry.device(app: TokenKind.voip.registry(of: Self.app), token: PipelineStack.token(5))?.openID == "user-5")
            #expect(try await stack.registry.device(app: Self.app, token: PipelineStack.token(5)) == nil)
            let exported = try await CLIProcess.run(["devices", "export", "--kind", "voip"] + config)
            #expect(exported.status == 0 && exported.standardOutput.contains(token), "\(exported.standardError)")
            #expect(try await CLIProcess.run(["devices", "export"] + config).standardOutput.isEmpty, "no device token was bound")
            let bad = try await CLIProcess.run(["devices", "unbind", token, "--kind", "fax"] + config)
            #expect(bad.status == 64 && bad.standardError.contains("--kind"))
            #expect(try await CLIProcess.run(["devices", "unbind", token, "--kind", "voip"] + config).status == 0)
            #expect(try await CLIProcess.run(["devices", "unbind", token, "--kind", "voip"] + config).status == 2)
        }
    }

    @Test("activities bind, show and unbind an activity's update tokens")
    func activityTokens() async throws {
        try await PipelineStack.with { stack in
            let target = ["--app", Self.app, "--environment", "sandbox", "--activity", "match-42", "--config", stack.configurationPath]
            let token = PipelineStack.token(9).hex
            let kept = try await CLIProcess.run(["activities", "bind", token, "--expires-in", "600", "--json"] + target)
            #expect(kept.status == 0 && kept.standardOutput.contains(#""expires-at":"#), "\(kept.standardError)")
            #expect(try await CLIProcess.run(["activities", "show"] + target).standardOutput == token + "\n")
            let tooLong = try await CLIProcess.run(["activities", "bind", token, "--expires-in", "90000"] + target)
            #expect(tooLong.status == 64)
            #expect(try await CLIProcess.run(["activities", "unbind", token] + target).status == 0)
            #expect(try await CLIProcess.run(["activities", "unbind", token] + target).status == 2)
            #expect(try await CLIProcess.run(["activities", "show"] + target).standardOutput.isEmpty)
        }
    }
}
