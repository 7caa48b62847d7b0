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
        #expect(APIKeyDigest(Self.digest.uppercased().replacingOccurrences(of: "SHA256", with: "sha256")) == app.apiKeys.first?.digest)
        #expect(app.apiKeys.first?.scope == .all)
        let fromEnvironment = try parse(minimalYAML, environment: ["PUSHFLEET__APPS__NEWS__API_KEYS": "\(Self.digest), \(Self.digest)"])
        #expect(fromEnvironment.apps["news"]?.apiKeys.count == 2)
    }

    @Test func aDigestMayNameItsScope() throws {
        let yaml = withAppKey("api-keys", "[\"\(Self.digest) device\", \"\(Self.digest)  all\"]")
        let app = try #require(try parse(yaml).apps["news"])
        #expect(app.apiKeys.map(\.scope) == [.device, .all])
        #expect(app.apiKeys.map(\.description) == ["\(Self.digest) device", Self.digest])
        #expect(APIKeyScope.all.allows(.device) && APIKeyScope.all.allows(.all))
        #expect(APIKeyScope.device.allows(.device) && !APIKeyScope.device.allows(.all))
        for refused in ["\(Self.digest) admin", "\(Self.digest) device extra", "device \(Self.digest)"] {
            let error = try #require(parseError(withAppKey("api-keys", "[\"\(refused)\"]")), "\(refused)")
            #expect(error.key == "apps.news.api-keys")
            #expect(error.message.contains("scope (all or device)"))
        }
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
        try "# keys of news\n\(Self.digest)\n\n\(Self.digest) device\n".write(to: file, atomically: true, encoding: .utf8)
        let app = try #require(try parse(withAppKey("api-keys-file", file.path)).apps["news"])
        #expect(try app.allAPIKeys().map(\.description) == [Self.digest, "\(Self.digest) device"])

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

    @Test func theTimeZoneOfHourStatisticsIsAnIANANameDefaultingToUTC() throws {
        #expect(try parse(minimalYAML).apps["news"]?.timeZone == "UTC")
        let paris = try #require(try parse(withAppKey("time-zone", "Europe/Paris")).apps["news"])
        #expect(paris.timeZone == "Europe/Paris")
        #expect(paris.statisticsTimeZone.identifier == "Europe/Paris")
        for refused in ["Mars/Olympus_Mons", "Europe/Pariss", "GMT+5", "UTC+1"] {
            let error = try #require(parseError(withAppKey("time-zone", refused)), "\(refused)")
            #expect(error.key == "apps.news.time-zone")
            #expect(error.message.contains(refused))
        }
    }

    @Test func kafkaPropertiesThatTurnTLSChecksOffAreNamed() throws {
        #expect(try parse(minimalYAML).kafka.tlsChecksTurnedOff.isEmpty)
        let sound = KafkaSettings(
            bootstrapServers: "b:9092", properties: ["security.protocol": "SSL", "enable.ssl.certificate.verification": "true"])
        #expect(sound.tlsChecksTurnedOff.isEmpty)
        let yaml =
            "kafka:\n  bootstrap-servers: b:9092\n  properties:\n    enable.ssl.certificate.verification: false\n    ssl.endpoint.identification.algorithm: none\n"
            + minimalYAML.replacingOccurrences(of: "kafka:\n  bootstrap-servers: \"broker:9092\"\n", with: "")
        #expect(
            try parse(yaml).kafka.tlsChecksTurnedOff == ["enable.ssl.certificate.verification=false", "ssl.endpoint.identification.algorithm=none"])
    }
}
