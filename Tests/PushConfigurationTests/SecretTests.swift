import APNsCore
import Foundation
import PushConfiguration
import Testing

@Suite struct SecretTests {
    static let password = "Tr0ub4dor&3-unique"

    @Test func passwordAndPasswordFileAreExclusive() throws {
        let yaml = "redis:\n  password: \(Self.password)\n  password-file: pass.txt\n" + minimalYAML
        let error = try #require(parseError(yaml))
        #expect(error.key == "redis.password-file")
        #expect(error.message.contains("redis.password"))
        #expect(error.line == 3)
        #expect(!error.description.contains(Self.password))
    }

    @Test func passwordFromTheEnvironmentConflictsWithAFile() throws {
        let error = try #require(
            parseError(
                withSection("redis", "password-file", "pass.txt"), environment: ["PUSHFLEET__REDIS__PASSWORD": Self.password]))
        #expect(error.key == "redis.password-file")
        #expect(!error.description.contains(Self.password))
    }

    @Test(arguments: [
        "redis:\n  password: {\(password): 1}\n",
        "redis:\n  password: [\(password)]\n",
        "redis:\n  port: \(password)\n",
        "redis:\n  password \(password)\n",
    ])
    func errorsNeverQuoteAPassword(prefix: String) throws {
        let error = try #require(parseError(prefix + minimalYAML))
        #expect(!error.description.contains(Self.password))
        #expect(!String(reflecting: error).contains(Self.password))
    }

    @Test func badYAMLOnAPasswordLineIsNotQuoted() throws {
        let error = try #require(parseError("redis:\n  password: \"\(Self.password)\n" + minimalYAML))
        #expect(error.key == "(file)")
        #expect(!error.description.contains(Self.password))
    }

    @Test func environmentErrorsNeverQuoteTheValue() throws {
        for value in ["\"\(Self.password)", "'\(Self.password)' trailing"] {
            let error = try #require(parseError(minimalYAML, environment: ["PUSHFLEET__REDIS__PASSWORD": value]))
            #expect(error.key == "PUSHFLEET__REDIS__PASSWORD")
            #expect(!error.description.contains(Self.password))
        }
        let misplaced = try #require(parseError(minimalYAML, environment: ["PUSHFLEET__REDIS__PORT": Self.password]))
        #expect(!misplaced.description.contains(Self.password))
    }

    @Test func redisSettingsRedactThePassword() throws {
        let configuration = try parse(minimalYAML, environment: ["PUSHFLEET__REDIS__PASSWORD": Self.password])
        #expect(configuration.redis.password == Self.password)
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [
            String(describing: configuration.redis), String(reflecting: configuration.redis),
            String(describing: configuration), String(reflecting: configuration), dumped,
            "\(Mirror(reflecting: configuration.redis).children.map { "\($0.value)" })",
        ] {
            #expect(!text.contains(Self.password), "\(text)")
        }
        #expect(String(describing: configuration.redis).contains("password: <redacted>"))
        #expect(String(describing: RedisSettings()).contains("password: nil"))
    }

    @Test func resolvedPasswordPrefersThePasswordThenReadsTheFile() throws {
        #expect(try RedisSettings(password: "direct").resolvedPassword() == "direct")
        #expect(try RedisSettings().resolvedPassword() == nil)

        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write("pass.txt", "\(Self.password)\n")
        #expect(try RedisSettings(passwordFile: file).resolvedPassword() == Self.password)
        let crlf = try directory.write("crlf.txt", "\(Self.password)\r\n")
        #expect(try RedisSettings(passwordFile: crlf).resolvedPassword() == Self.password)
        let twoNewlines = try directory.write("two.txt", "\(Self.password)\n\n")
        #expect(try RedisSettings(passwordFile: twoNewlines).resolvedPassword() == "\(Self.password)\n")

        let empty = try directory.write("empty.txt", "\n")
        do {
            _ = try RedisSettings(passwordFile: empty).resolvedPassword()
            Issue.record("expected an error")
        } catch {
            #expect(error.key == "redis.password-file")
            #expect(error.message.contains("empty"))
        }
        do {
            _ = try RedisSettings(passwordFile: directory.path + "/missing.txt").resolvedPassword()
            Issue.record("expected an error")
        } catch {
            #expect(error.key == "redis.password-file")
        }
    }

    @Test func thePKCS12PassphraseFileIsReadWithTheBundle() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try directory.write("pass.txt", "p12secret\n")
        try directory.write("id.p12", "bundle")
        let yaml = minimalYAML.replacingOccurrences(
            of: "token: {team-id: ABCDE12345, key-id: KEY1234567, key-file: AuthKey.p8}",
            with: "pkcs12: {file: id.p12, passphrase-file: pass.txt}")
        let configuration = try PushFleetConfiguration.parse(yaml: yaml, baseDirectory: directory.path, environment: [:])
        guard case .pkcs12(_, let passphrase) = try configuration.apps["news"]?.readCredentialFiles(for: .production) else {
            Issue.record("not a PKCS#12 credential")
            return
        }
        #expect(passphrase == "p12secret")
    }
}
