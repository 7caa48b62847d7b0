import Foundation
import PushConfiguration
import Testing

@Suite struct AuthTests {
    static let tokenLine = "      token: {team-id: ABCDE12345, key-id: KEY1234567, key-file: AuthKey.p8}\n"

    func yaml(auth lines: String) -> String {
        minimalYAML.replacingOccurrences(of: Self.tokenLine, with: lines)
    }

    @Test(arguments: ["", "    auth:\n", "    auth: null\n"])
    func authIsRequired(replacement: String) throws {
        let error = try #require(parseError(minimalYAML.replacingOccurrences(of: "    auth:\n" + Self.tokenLine, with: replacement)))
        #expect(error.key == "apps.news.auth")
        #expect(error.message == "is required")
    }

    @Test func emptyAuthNeedsOneMethod() throws {
        let error = try #require(parseError(minimalYAML.replacingOccurrences(of: "    auth:\n" + Self.tokenLine, with: "    auth: {}\n")))
        #expect(error.key == "apps.news.auth")
        #expect(error.message.contains("exactly one of token, certificate or pkcs12"))
        #expect(error.message.contains("found none"))
    }

    @Test func twoMethodsAreRejected() throws {
        let error = try #require(parseError(yaml(auth: Self.tokenLine + "      pkcs12: {file: id.p12}\n")))
        #expect(error.key == "apps.news.auth")
        #expect(error.message.hasSuffix("found token and pkcs12"))
        #expect(error.line == 7)
    }

    @Test func threeMethodsAreRejected() throws {
        let error = try #require(parseError(yaml(auth: Self.tokenLine
            + "      certificate: {certificate-file: c, key-file: k}\n      pkcs12: {file: id.p12}\n")))
        #expect(error.message.hasSuffix("found token and certificate and pkcs12"))
    }

    @Test func nullMethodDoesNotCount() throws {
        let configuration = try parse(yaml(auth: Self.tokenLine + "      pkcs12: null\n"))
        #expect(configuration.apps["news"]?.auth == .token(teamID: "ABCDE12345", keyID: "KEY1234567", keyFile: "/etc/pushfleet/AuthKey.p8"))
    }

    @Test func certificateAndPKCS12() throws {
        let certificate = try parse(yaml(auth: "      certificate: {certificate-file: c.pem, key-file: /k.pem}\n"))
        #expect(certificate.apps["news"]?.auth == .certificate(certificateFile: "/etc/pushfleet/c.pem", keyFile: "/k.pem"))
        let pkcs12 = try parse(yaml(auth: "      pkcs12: {file: id.p12, passphrase-file: secrets/pass.txt}\n"))
        #expect(pkcs12.apps["news"]?.auth == .pkcs12(file: "/etc/pushfleet/id.p12", passphraseFile: "/etc/pushfleet/secrets/pass.txt"))
    }

    @Test(arguments: [
        ("      token: {team-id: ABCDE12345, key-id: KEY1234567}\n", "apps.news.auth.token.key-file"),
        ("      token: {key-id: KEY1234567, key-file: k}\n", "apps.news.auth.token.team-id"),
        ("      certificate: {key-file: k}\n", "apps.news.auth.certificate.certificate-file"),
        ("      certificate: {certificate-file: c}\n", "apps.news.auth.certificate.key-file"),
        ("      pkcs12: {passphrase-file: p}\n", "apps.news.auth.pkcs12.file"),
    ])
    func missingMethodKeysAreNamed(auth: String, key: String) throws {
        let error = try #require(parseError(yaml(auth: auth)))
        #expect(error.key == key)
        #expect(error.message == "is required")
        #expect(error.line == 7)
    }
}
