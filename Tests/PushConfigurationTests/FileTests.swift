import Foundation
import PushConfiguration
import Testing

@Suite struct FileTests {
    @Test func relativePathsResolveAgainstTheBaseDirectory() throws {
        let yaml = """
            kafka: {bootstrap-servers: k}
            redis: {password-file: secrets/../secrets/redis.txt}
            apns: {ca-file: ./ca.pem}
            apps:
              news:
                bundle-id: com.example.news
                auth: {token: {team-id: ABCDE12345, key-id: KEY1234567, key-file: keys/news.p8}}
              abs:
                bundle-id: com.example.abs
                auth: {certificate: {certificate-file: /certs/c.pem, key-file: ../k.pem}}
            """
        let configuration = try PushFleetConfiguration.parse(
            yaml: yaml, baseDirectory: "/srv/pf/conf",
            environment: [
                "PUSHFLEET__APPS__NEWS__AUTH__TOKEN__KEY_FILE": "env/news.p8"
            ])
        #expect(configuration.redis.passwordFile == "/srv/pf/conf/secrets/redis.txt")
        #expect(configuration.apns.caFile == "/srv/pf/conf/ca.pem")
        #expect(configuration.apps["news"]?.auth == .token(teamID: "ABCDE12345", keyID: "KEY1234567", keyFile: "/srv/pf/conf/env/news.p8"))
        #expect(configuration.apps["abs"]?.auth == .certificate(certificateFile: "/certs/c.pem", keyFile: "/srv/pf/k.pem"))
    }

    @Test func loadReadsTheFileResolvesPathsAndChecksFiles() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("keys/AuthKey.p8", "-----BEGIN PRIVATE KEY-----\n")
        let path = try directory.write("pushfleet.yaml", minimalYAML.replacingOccurrences(of: "AuthKey.p8", with: "keys/AuthKey.p8"))
        let configuration = try PushFleetConfiguration.load(path: path, environment: ["PUSHFLEET__REDIS__PORT": "7000"])
        #expect(configuration.redis.port == 7000)
        let expectedKey = URL(fileURLWithPath: directory.path).appendingPathComponent("keys/AuthKey.p8").standardizedFileURL.path
        #expect(configuration.apps["news"]?.auth == .token(teamID: "ABCDE12345", keyID: "KEY1234567", keyFile: expectedKey))
    }

    @Test func loadRejectsAMissingKeyFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try directory.write("pushfleet.yaml", minimalYAML)
        do {
            _ = try PushFleetConfiguration.load(path: path, environment: [:])
            Issue.record("expected an error")
        } catch {
            #expect(error.key == "apps.news.auth.token.key-file")
            #expect(error.message.contains("AuthKey.p8"))
            #expect(error.message.contains("does not exist"))
        }
    }

    @Test func validateFilesNamesEachKey() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let present = try directory.write("present", "x")
        let missing = directory.path + "/missing"

        func failingKey(_ configuration: PushFleetConfiguration) -> String? {
            do {
                try configuration.validateFiles()
                return nil
            } catch {
                return error.key
            }
        }
        let app = { (auth: AppAuth) in AppSettings(id: "news", bundleID: "com.example.news", auth: auth) }
        let base = PushFleetConfiguration(
            kafka: KafkaSettings(bootstrapServers: "k"),
            apps: ["news": app(.token(teamID: "ABCDE12345", keyID: "KEY1234567", keyFile: present))])
        #expect(failingKey(base) == nil)

        var configuration = base
        configuration.apps["news"] = app(.token(teamID: "ABCDE12345", keyID: "KEY1234567", keyFile: missing))
        #expect(failingKey(configuration) == "apps.news.auth.token.key-file")
        configuration.apps["news"] = app(.certificate(certificateFile: missing, keyFile: present))
        #expect(failingKey(configuration) == "apps.news.auth.certificate.certificate-file")
        configuration.apps["news"] = app(.certificate(certificateFile: present, keyFile: missing))
        #expect(failingKey(configuration) == "apps.news.auth.certificate.key-file")
        configuration.apps["news"] = app(.pkcs12(file: missing, passphraseFile: nil))
        #expect(failingKey(configuration) == "apps.news.auth.pkcs12.file")
        configuration.apps["news"] = app(.pkcs12(file: present, passphraseFile: missing))
        #expect(failingKey(configuration) == "apps.news.auth.pkcs12.passphrase-file")
        configuration.apps["news"] = app(.pkcs12(file: directory.path, passphraseFile: nil))
        #expect(failingKey(configuration) == "apps.news.auth.pkcs12.file")

        configuration = base
        configuration.apns.caFile = missing
        #expect(failingKey(configuration) == "apns.ca-file")
        configuration = base
        configuration.redis.passwordFile = missing
        #expect(failingKey(configuration) == "redis.password-file")
    }

    @Test func loadReportsAMissingConfigurationFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for path in [directory.path + "/nope.yaml", directory.path] {
            do {
                _ = try PushFleetConfiguration.load(path: path, environment: [:])
                Issue.record("expected an error")
            } catch {
                #expect(error.key == "(file)")
                #expect(error.description.hasPrefix("(file): "))
            }
        }
    }
}
