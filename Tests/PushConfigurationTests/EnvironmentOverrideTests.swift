import APNsCore
import Foundation
import PushConfiguration
import Testing

@Suite struct EnvironmentOverrideTests {
    @Test func overridesAScalar() throws {
        let configuration = try parse(minimalYAML, environment: ["PUSHFLEET__KAFKA__BOOTSTRAP_SERVERS": "k1:9092,k2:9092"])
        #expect(configuration.kafka.bootstrapServers == "k1:9092,k2:9092")
    }

    @Test func addsKeysAndSections() throws {
        let configuration = try parse(
            minimalYAML,
            environment: [
                "PUSHFLEET__REDIS__PASSWORD": "s3cr3t: #not a comment",
                "PUSHFLEET__REDIS__POOL_SIZE": "12",
                "PUSHFLEET__WORKER__RESEND_POLL_MS": "50",
            ])
        #expect(configuration.redis.password == "s3cr3t: #not a comment")
        #expect(configuration.redis.poolSize == 12)
        #expect(configuration.worker.resendPollInterval == .milliseconds(50))
    }

    @Test func segmentsAreCaseInsensitive() throws {
        let configuration = try parse(
            minimalYAML,
            environment: [
                "PUSHFLEET__redis__Pool_Size": "3", "PUSHFLEET__Apps__NEWS__Rate_Per_Second": "7",
            ])
        #expect(configuration.redis.poolSize == 3)
        #expect(configuration.apps["news"]?.ratePerSecond == 7)
    }

    @Test func kafkaPropertiesUseDotsForUnderscores() throws {
        let yaml = minimalYAML.replacingOccurrences(
            of: "  bootstrap-servers: \"broker:9092\"\n",
            with: "  bootstrap-servers: \"broker:9092\"\n  properties:\n    security.protocol: PLAINTEXT\n")
        let configuration = try parse(
            yaml,
            environment: [
                "PUSHFLEET__KAFKA__PROPERTIES__SASL_MECHANISM": "PLAIN",
                "PUSHFLEET__KAFKA__PROPERTIES__SECURITY_PROTOCOL": "SASL_SSL",
                "PUSHFLEET__KAFKA__PROPERTIES__QUEUE_BUFFERING_MAX_MS": "5",
            ])
        #expect(
            configuration.kafka.properties == [
                "sasl.mechanism": "PLAIN", "security.protocol": "SASL_SSL", "queue.buffering.max.ms": "5",
            ])
    }

    @Test func overridesAnAppRate() throws {
        let configuration = try parse(minimalYAML, environment: ["PUSHFLEET__APPS__NEWS__RATE_PER_SECOND": "500"])
        let news = try #require(configuration.apps["news"])
        #expect(news.ratePerSecond == 500)
        #expect(news.burst == 500)
    }

    @Test func appIDsMatchCaseInsensitivelyWithUnderscoreForDash() throws {
        let yaml = minimalYAML.replacingOccurrences(of: "  news:", with: "  Breaking-News:")
        let configuration = try parse(yaml, environment: ["PUSHFLEET__APPS__BREAKING_NEWS__BURST": "9"])
        #expect(configuration.apps.count == 1)
        #expect(configuration.apps["Breaking-News"]?.burst == 9)
    }

    @Test func ambiguousAppIDIsAnError() throws {
        let yaml =
            minimalYAML + """
                  a-b:
                    bundle-id: x
                    auth: {pkcs12: {file: f}}
                  a_b:
                    bundle-id: y
                    auth: {pkcs12: {file: f}}

                """
        let error = try #require(parseError(yaml, environment: ["PUSHFLEET__APPS__A_B__BURST": "2"]))
        #expect(error.key == "PUSHFLEET__APPS__A_B__BURST")
        #expect(error.message.contains("ambiguous"))
    }

    @Test func createsANewApp() throws {
        let configuration = try parse(
            minimalYAML,
            environment: [
                "PUSHFLEET__APPS__WEATHER__BUNDLE_ID": "com.example.weather",
                "PUSHFLEET__APPS__WEATHER__ENVIRONMENTS": "production",
                "PUSHFLEET__APPS__WEATHER__AUTH__PKCS12__FILE": "weather.p12",
            ])
        let weather = try #require(configuration.apps["weather"])
        #expect(weather.bundleID == "com.example.weather")
        #expect(weather.environments == [.production])
        #expect(weather.auth == .pkcs12(file: "/etc/pushfleet/weather.p12", passphraseFile: nil))
        #expect(configuration.apps.count == 2)
    }

    @Test func newAppStillNeedsItsRequiredKeys() throws {
        let error = try #require(parseError(minimalYAML, environment: ["PUSHFLEET__APPS__WEATHER__RATE_PER_SECOND": "5"]))
        #expect(error.key == "apps.weather.bundle-id")
        #expect(error.message == "is required (set by PUSHFLEET__APPS__WEATHER__RATE_PER_SECOND)")
        #expect(error.line == nil)
    }

    @Test func nullRemovesAKey() throws {
        let yaml = withSection("redis", "port", "6380")
        #expect(try parse(yaml, environment: ["PUSHFLEET__REDIS__PORT": "null"]).redis.port == 6379)
        #expect(try parse(yaml, environment: ["PUSHFLEET__REDIS__PORT": "~"]).redis.port == 6379)
        #expect(try parse(yaml, environment: ["PUSHFLEET__REDIS__PORT": ""]).redis.port == 6379)
        // Removing something that is not there creates nothing.
        let configuration = try parse(minimalYAML, environment: ["PUSHFLEET__APPS__GHOST__BURST": "null"])
        #expect(configuration.apps.keys.sorted() == ["news"])
    }

    @Test func nullThenChildrenReplacesAuthMethod() throws {
        let configuration = try parse(
            minimalYAML,
            environment: [
                "PUSHFLEET__APPS__NEWS__AUTH": "null",
                "PUSHFLEET__APPS__NEWS__AUTH__CERTIFICATE__CERTIFICATE_FILE": "/c.pem",
                "PUSHFLEET__APPS__NEWS__AUTH__CERTIFICATE__KEY_FILE": "/k.pem",
            ])
        #expect(configuration.apps["news"]?.auth == .certificate(certificateFile: "/c.pem", keyFile: "/k.pem"))
    }

    @Test func quotedValuesAreStrings() throws {
        let configuration = try parse(
            minimalYAML,
            environment: [
                "PUSHFLEET__REDIS__USERNAME": "\"null\"", "PUSHFLEET__REDIS__PASSWORD": "'500'",
            ])
        #expect(configuration.redis.username == "null")
        #expect(configuration.redis.password == "500")
        let error = try #require(parseError(minimalYAML, environment: ["PUSHFLEET__REDIS__PORT": "\"6379\""]))
        #expect(error.key == "redis.port")
        #expect(error.message == "expected an integer, found a string (set by PUSHFLEET__REDIS__PORT)")
    }

    @Test func badOverrideValueNamesTheKeyAndVariable() throws {
        let error = try #require(parseError(minimalYAML, environment: ["PUSHFLEET__REGISTRY__SHARDS": "0"]))
        #expect(error.key == "registry.shards")
        #expect(error.message.contains("PUSHFLEET__REGISTRY__SHARDS"))
        #expect(error.line == nil)
    }

    @Test(arguments: [
        ("PUSHFLEET__REDIS__PASWORD", "redis.pasword"),
        ("PUSHFLEET__KAFAK__BOOTSTRAP_SERVERS", "kafak"),
        ("PUSHFLEET__APPS__NEWS__RATE", "apps.news.rate"),
        ("PUSHFLEET__APPS__NEWS__AUTH__TOKEN__KEYFILE", "apps.news.auth.token.keyfile"),
        ("PUSHFLEET__REDIS__PORT__X", "redis.port"),
        ("PUSHFLEET__KAFKA__PROPERTIES__A__B", "kafka.properties"),
        ("PUSHFLEET__REDIS____PORT", "malformed"),
        ("PUSHFLEET__", "malformed"),
    ])
    func unknownOverrideKeyNamesTheVariable(variable: String, path: String) throws {
        let error = try #require(parseError(minimalYAML, environment: [variable: "1"]))
        #expect(error.key == variable)
        #expect(error.message.contains(path))
    }

    @Test func overrideBelowAScalarIsAnError() throws {
        let error = try #require(
            parseError(
                minimalYAML.replacingOccurrences(
                    of: "kafka:\n  bootstrap-servers: \"broker:9092\"\n", with: "kafka: {bootstrap-servers: k, properties: x}\n"),
                environment: ["PUSHFLEET__KAFKA__PROPERTIES__A": "1"]))
        #expect(error.key == "PUSHFLEET__KAFKA__PROPERTIES__A")
        #expect(error.message.contains("not a mapping"))
    }

    @Test func otherVariablesAreIgnored() throws {
        let configuration = try parse(
            minimalYAML,
            environment: [
                "PATH": "/bin", "PUSHFLEET_REDIS_PORT": "1", "pushfleet__redis__port": "1", "XPUSHFLEET__REDIS__PORT": "1",
            ])
        #expect(configuration.redis.port == 6379)
    }

    @Test func overridesCanSupplyTheWholeConfiguration() throws {
        let configuration = try parse(
            "",
            environment: [
                "PUSHFLEET__KAFKA__BOOTSTRAP_SERVERS": "k:9092",
                "PUSHFLEET__APPS__NEWS__BUNDLE_ID": "com.example.news",
                "PUSHFLEET__APPS__NEWS__AUTH__TOKEN__TEAM_ID": "ABCDE12345",
                "PUSHFLEET__APPS__NEWS__AUTH__TOKEN__KEY_ID": "KEY1234567",
                "PUSHFLEET__APPS__NEWS__AUTH__TOKEN__KEY_FILE": "/keys/news.p8",
            ])
        #expect(configuration.apps["news"]?.auth == .token(teamID: "ABCDE12345", keyID: "KEY1234567", keyFile: "/keys/news.p8"))
    }
}
