import APNsCore
import Foundation
import PushConfiguration
import Testing

@Suite struct TypeTests {
    @Test(arguments: [
        ("redis", "port", "\"6379\"", "expected an integer, found a string"),
        ("redis", "port", "abc", "expected an integer, found a string"),
        ("redis", "port", "1.5", "expected an integer, found a floating-point number"),
        ("redis", "port", "true", "expected an integer, found a boolean"),
        ("redis", "port", "[1]", "expected an integer, found a list"),
        ("redis", "port", "{a: 1}", "expected an integer, found a mapping"),
        ("redis", "port", "0o17", "expected a decimal integer"),
        ("redis", "port", "017", "expected a decimal integer"),
        ("redis", "port", "99999999999999999999", "expected a decimal integer"),
        ("redis", "host", "[a, b]", "expected a string, found a list"),
        ("redis", "password", "{a: b}", "expected a string, found a mapping"),
        ("apns", "endpoint", "[h, 1]", "expected a mapping, found a list"),
        ("apns", "endpoint", "sim.local", "expected a mapping, found a string"),
    ])
    func wrongTypeIsNamed(section: String, key: String, value: String, message: String) throws {
        let error = try #require(parseError(withSection(section, key, value)))
        #expect(error.key == "\(section).\(key)")
        #expect(error.message.contains(message), "\(error)")
        #expect(error.line == 2)
    }

    @Test func listWhereSectionMappingIsExpected() throws {
        let error = try #require(parseError("redis:\n  - host\n" + minimalYAML))
        #expect(error.key == "redis")
        #expect(error.message == "expected a mapping, found a list")
        #expect(error.line == 2)
    }

    @Test func appsAsAListIsRejected() throws {
        let error = try #require(
            parseError(
                """
                kafka: {bootstrap-servers: k}
                apps:
                  - id: news
                    bundle-id: com.example.news
                """))
        #expect(error.key == "apps")
        #expect(error.message.contains("expected a mapping keyed by app id, found a list"))
        #expect(error.line == 3)
    }

    @Test func appAndAuthMustBeMappings() throws {
        let app = try #require(parseError("kafka: {bootstrap-servers: k}\napps:\n  news: [1]\n"))
        #expect(app.key == "apps.news")
        #expect(app.message == "expected a mapping, found a list")
        let auth = try #require(
            parseError(
                minimalYAML.replacingOccurrences(
                    of: "    auth:\n      token: {team-id: ABCDE12345, key-id: KEY1234567, key-file: AuthKey.p8}\n",
                    with: "    auth: [token]\n")))
        #expect(auth.key == "apps.news.auth")
        #expect(auth.message == "expected a mapping, found a list")
        #expect(auth.line == 6)
    }

    @Test func topLevelMustBeAMapping() throws {
        let error = try #require(parseError("- a\n- b\n"))
        #expect(error.key == "(file)")
        #expect(error.message == "expected a mapping, found a list")
    }

    @Test func emptyDocumentReportsTheFirstRequiredKey() throws {
        let error = try #require(parseError(""))
        #expect(error.key == "kafka.bootstrap-servers")
    }

    @Test func kafkaPropertyValuesMustBeScalars() throws {
        let error = try #require(
            parseError(
                "kafka:\n  bootstrap-servers: k\n  properties:\n    a.b: [1]\n"
                    + minimalYAML.replacingOccurrences(of: "kafka:\n  bootstrap-servers: \"broker:9092\"\n", with: "")))
        #expect(error.key == "kafka.properties.a.b")
        #expect(error.line == 4)
    }

    @Test func stringsAcceptNumbersAsWritten() throws {
        let configuration = try parse(withSection("redis", "username", "007"))
        #expect(configuration.redis.username == "007")
    }

    @Test func rateAcceptsIntegersAndFloats() throws {
        #expect(try parse(withAppKey("rate-per-second", "250")).apps["news"]?.ratePerSecond == 250)
        #expect(try parse(withAppKey("rate-per-second", "0.25")).apps["news"]?.ratePerSecond == 0.25)
        let error = try #require(parseError(withAppKey("rate-per-second", "fast")))
        #expect(error.message == "expected a number, found a string")
    }

    @Test func environmentsAcceptACommaSeparatedString() throws {
        #expect(try parse(withAppKey("environments", "production")).apps["news"]?.environments == [.production])
        #expect(
            try parse(withAppKey("environments", "\"production, sandbox\"")).apps["news"]?.environments
                == [.production, .sandbox])
        let error = try #require(parseError(withAppKey("environments", "[[sandbox]]")))
        #expect(error.key == "apps.news.environments")
    }

    @Test func invalidYAMLReportsTheFileAndLine() throws {
        let error = try #require(parseError("kafka:\n  bootstrap-servers: [unclosed\nredis: {}\n"))
        #expect(error.key == "(file)")
        #expect(error.message.hasPrefix("invalid YAML"))
        #expect(error.line != nil)
    }

    @Test func duplicateKeysAreRejected() throws {
        let error = try #require(parseError("redis:\n  port: 1\n  port: 2\n" + minimalYAML))
        #expect(error.key == "(file)")
        #expect(error.message.contains("duplicate key 'port'"))
        #expect(error.line == 2)
    }

    @Test func aliasesAreResolved() throws {
        let configuration = try parse(
            """
            kafka: {bootstrap-servers: k}
            apps:
              news:
                bundle-id: com.example.news
                auth: &auth {pkcs12: {file: id.p12}}
              sports:
                bundle-id: com.example.sports
                auth: *auth
            """)
        #expect(configuration.apps["sports"]?.auth == .pkcs12(file: "/etc/pushfleet/id.p12", passphraseFile: nil))
    }
}
