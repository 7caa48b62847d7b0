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
}
