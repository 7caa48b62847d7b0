import Foundation
import PushConfiguration
import Testing

@Suite struct UnknownKeyTests {
    @Test func unknownTopLevelKey() throws {
        let error = try #require(parseError("kafak:\n  bootstrap-servers: x\n" + minimalYAML))
        #expect(error.key == "kafak")
        #expect(error.line == 1)
        #expect(error.message.contains("unknown key 'kafak'"))
        #expect(error.message.contains("did you mean 'kafka'?"))
    }

    @Test("an empty key is named '' (found by FuzzTests)")
    func emptyKey() throws {
        let top = try #require(parseError("\"\": 1\n" + minimalYAML))
        #expect(top.key == "''")
        #expect(top.line == 1)
        let nested = try #require(parseError(withSection("redis", "\"\"", "1")))
        #expect(nested.key == "redis.''")
    }

    @Test(arguments: [
        ("redis", "pasword", "redis.pasword"),
        ("redis", "pool_size", "redis.pool_size"),
        ("apns", "timeout", "apns.timeout"),
        ("registry", "shard", "registry.shard"),
        ("worker", "chunksize", "worker.chunksize"),
        ("resend", "max-attempt", "resend.max-attempt"),
        ("metrics", "host", "metrics.host"),
    ])
    func unknownNestedKey(section: String, key: String, path: String) throws {
        let error = try #require(parseError(withSection(section, key, "1")))
        #expect(error.key == path)
        #expect(error.line == 2)
        #expect(error.message.hasPrefix("unknown key '\(key)'"))
    }

    @Test func unknownKeyInDeeperSections() throws {
        let endpoint = try #require(parseError("apns:\n  endpoint: {host: h, tls: true}\n" + minimalYAML))
        #expect(endpoint.key == "apns.endpoint.tls")
        let kafka = try #require(
            parseError(
                minimalYAML.replacingOccurrences(
                    of: "  bootstrap-servers: \"broker:9092\"\n", with: "  bootstrap-servers: \"broker:9092\"\n  bootstrap_server: x\n")))
        #expect(kafka.key == "kafka.bootstrap_server")
        #expect(kafka.line == 3)
    }

    @Test func unknownAppKey() throws {
        let error = try #require(parseError(withAppKey("rate-per-sec", "5")))
        #expect(error.key == "apps.news.rate-per-sec")
        #expect(error.line == 8)
        #expect(error.message.contains("did you mean 'rate-per-second'?"))
    }

    @Test func unknownAuthKeys() throws {
        let method = try #require(
            parseError(
                withAppKey("auth", "{jwt: {key-file: k}}")
                    .replacingOccurrences(of: "    auth:\n      token: {team-id: ABCDE12345, key-id: KEY1234567, key-file: AuthKey.p8}\n", with: "")))
        #expect(method.key == "apps.news.auth.jwt")
        let tokenKey = try #require(parseError(minimalYAML.replacingOccurrences(of: "key-file: AuthKey.p8", with: "key-file: k, keyfile: k")))
        #expect(tokenKey.key == "apps.news.auth.token.keyfile")
        #expect(tokenKey.line == 7)
        let certificateKey = try #require(
            parseError(
                minimalYAML.replacingOccurrences(
                    of: "token: {team-id: ABCDE12345, key-id: KEY1234567, key-file: AuthKey.p8}",
                    with: "certificate: {certificate-file: c, key-file: k, password: x}")))
        #expect(certificateKey.key == "apps.news.auth.certificate.password")
        let pkcs12Key = try #require(
            parseError(
                minimalYAML.replacingOccurrences(
                    of: "token: {team-id: ABCDE12345, key-id: KEY1234567, key-file: AuthKey.p8}",
                    with: "pkcs12: {file: c, passphrase: x}")))
        #expect(pkcs12Key.key == "apps.news.auth.pkcs12.passphrase")
    }

    @Test func keysAreCaseSensitiveInTheFile() throws {
        let error = try #require(parseError(withSection("redis", "Port", "1")))
        #expect(error.key == "redis.Port")
        #expect(error.message.contains("did you mean 'port'?"))
    }

    @Test func kafkaPropertiesAcceptAnyName() throws {
        let configuration = try parse(
            minimalYAML.replacingOccurrences(
                of: "  bootstrap-servers: \"broker:9092\"\n",
                with: "  bootstrap-servers: \"broker:9092\"\n  properties: {any.thing.goes: 1, Whatever_Case: yes}\n"))
        #expect(configuration.kafka.properties == ["any.thing.goes": "1", "Whatever_Case": "true"])
    }
}
