import Foundation
import PushConfiguration
import Testing

@Suite struct GatewaySettingsTests {
    @Test func defaultsAndOverrides() throws {
        #expect(try parse(minimalYAML).gateway == GatewaySettings())
        let configured = try parse(
            """
            gateway:
              host: 127.0.0.1
              port: 0
              id: gw-1
              ping-interval-seconds: 5
              idle-timeout-seconds: 10
              max-frame-bytes: 4096
              messages-per-second: 3
              message-burst: 6
              token-ttl-seconds: 60
              inbox-size: 5
              inbox-ttl-seconds: 3600

            """ + minimalYAML)
        #expect(
            configured.gateway
                == GatewaySettings(
                    host: "127.0.0.1", port: 0, id: "gw-1", tokenTimeToLive: .seconds(60), pingInterval: .seconds(5),
                    idleTimeout: .seconds(10), maxFrameBytes: 4096, messagesPerSecond: 3, messageBurst: 6, inboxSize: 5,
                    inboxTimeToLive: .seconds(3600)))
        #expect(try parse(minimalYAML, environment: ["PUSHFLEET__GATEWAY__ID": "gw-2"]).gateway.id == "gw-2")
    }

    @Test(arguments: [
        ("id: 'gw a'", "gateway.id"), ("idle-timeout-seconds: 40", "gateway.idle-timeout-seconds"),
        ("max-frame-bytes: 100", "gateway.max-frame-bytes"), ("ping-interval-seconds: 0", "gateway.ping-interval-seconds"),
        ("token-ttl-seconds: 100000", "gateway.token-ttl-seconds"), ("messages-per-second: 0", "gateway.messages-per-second"),
        ("secret: x", "gateway.secret"), ("inbox-size: 0", "gateway.inbox-size"), ("inbox-ttl-seconds: 2592001", "gateway.inbox-ttl-seconds"),
    ])
    func badValuesNameTheirKey(line: String, key: String) throws {
        let error = try #require(parseError("gateway:\n  \(line)\n" + minimalYAML), "\(line)")
        #expect(error.key == key)
    }

    @Test func theSecretIsReadFromItsFileAndAShortOneIsRefusedWithoutEchoingIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-gateway-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("secret")
        let secret = String(repeating: "k", count: 40)
        try (secret + "\n").write(to: file, atomically: true, encoding: .utf8)
        let settings = try parse("gateway:\n  secret-file: \(file.path)\n" + minimalYAML).gateway
        #expect(try settings.resolvedSecret() == Array(secret.utf8))

        try "short-secret\n".write(to: file, atomically: true, encoding: .utf8)
        do {
            _ = try settings.resolvedSecret()
            Issue.record("a 12-byte key must be refused")
        } catch {
            #expect(error.key == "gateway.secret-file")
            #expect(error.message.contains("at least 32"))
            #expect(!error.description.contains("short-secret"))
        }
        do {
            _ = try GatewaySettings().resolvedSecret()
            Issue.record("no secret-file must be refused")
        } catch {
            #expect(error.key == "gateway.secret-file")
        }
    }
}
