import Foundation
import PushConfiguration
import Testing

@Suite struct APISettingsTests {
    static let digest = "sha256:" + String(repeating: "0a", count: 32)

    @Test func defaultsAndOverrides() throws {
        #expect(try parse(minimalYAML).api == APISettings(host: "0.0.0.0", port: 8080, maxBodyBytes: 2 * 1024 * 1024))
        let configured = try parse("api:\n  host: 127.0.0.1\n  port: 0\n  max-body-bytes: 4096\n" + minimalYAML)
        #expect(configured.api == APISettings(host: "127.0.0.1", port: 0, maxBodyBytes: 4096))
        #expect(try parse(minimalYAML, environment: ["PUSHFLEET__API__PORT": "9000"]).api.port == 9000)
        let small = try #require(parseError("api:\n  max-body-bytes: 10\n" + minimalYAML))
        #expect(small.key == "api.max-body-bytes")
    }

    @Test func apiKeysAreDigests() throws {
        let app = try #require(try parse(withAppKey("api-keys", "[\"\(Self.digest)\"]")).apps["news"])
        #expect(app.apiKeys.map(\.description) == [Self.digest])
        #expect(APIKeyDigest(Self.digest.uppercased().replacingOccurrences(of: "SHA256", with: "sha256")) == app.apiKeys.first)
        let fromEnvironment = try parse(minimalYAML, environment: ["PUSHFLEET__APPS__NEWS__API_KEYS": "\(Self.digest), \(Self.digest)"])
        #expect(fromEnvironment.apps["news"]?.apiKeys.count == 2)
    }

    @Test(arguments: ["my-secret-key", "sha256:abc", "sha1:" + String(repeating: "0a", count: 32), "sha256:" + String(repeating: "zz", count: 32)])
    func aKeyInPlaceOfItsDigestIsRefusedWithoutEchoingIt(value: String) throws {
        let error = try #require(parseError(withAppKey("api-keys", "[\"\(value)\"]")))
        #expect(error.key == "apps.news.api-keys")
        #expect(error.message.contains("sha256"))
        #expect(!error.description.contains(value))
    }

    @Test func keysFileIsReadAndCheckedLineByLine() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("keys")
        try "# keys of news\n\(Self.digest)\n\n".write(to: file, atomically: true, encoding: .utf8)
        let app = try #require(try parse(withAppKey("api-keys-file", file.path)).apps["news"])
        #expect(try app.allAPIKeys().map(\.description) == [Self.digest])

        try "\(Self.digest)\nplain-secret\n".write(to: file, atomically: true, encoding: .utf8)
        do {
            _ = try app.allAPIKeys()
            Issue.record("a line that is not a digest must be refused")
        } catch {
            #expect(error.key == "apps.news.api-keys-file")
            #expect(error.message.contains("line 2"))
            #expect(!error.description.contains("plain-secret"))
        }
    }
}
