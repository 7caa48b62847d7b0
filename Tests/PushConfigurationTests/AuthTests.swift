import APNsCore
import Foundation
import Testing

@testable import PushConfiguration

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
        let error = try #require(
            parseError(
                yaml(
                    auth: Self.tokenLine
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

    static let sandboxCertificate = "      sandbox:\n        certificate: {certificate-file: dev.pem, key-file: dev-key.pem}\n"
    static let productionCertificate = "      production:\n        certificate: {certificate-file: prod.pem, key-file: prod-key.pem}\n"

    @Test func aCertificatePerEnvironment() throws {
        let configuration = try parse(yaml(auth: Self.sandboxCertificate + Self.productionCertificate))
        let app = try #require(configuration.apps["news"])
        #expect(app.auth(for: .sandbox) == .certificate(certificateFile: "/etc/pushfleet/dev.pem", keyFile: "/etc/pushfleet/dev-key.pem"))
        #expect(app.auth(for: .production) == .certificate(certificateFile: "/etc/pushfleet/prod.pem", keyFile: "/etc/pushfleet/prod-key.pem"))
        #expect(app.auth == app.auth(for: .production))
        #expect(app.authKey(for: .sandbox) == "apps.news.auth.sandbox")
        #expect(
            configuration.referencedFiles.map(\.key) == [
                "apps.news.auth.sandbox.certificate.certificate-file", "apps.news.auth.sandbox.certificate.key-file",
                "apps.news.auth.production.certificate.certificate-file", "apps.news.auth.production.certificate.key-file",
            ])
    }

    @Test func aSharedCredentialWithOneEnvironmentsOwn() throws {
        let configuration = try parse(yaml(auth: Self.tokenLine + Self.sandboxCertificate))
        let app = try #require(configuration.apps["news"])
        #expect(app.auth(for: .production) == .token(teamID: "ABCDE12345", keyID: "KEY1234567", keyFile: "/etc/pushfleet/AuthKey.p8"))
        #expect(app.auth(for: .sandbox) == .certificate(certificateFile: "/etc/pushfleet/dev.pem", keyFile: "/etc/pushfleet/dev-key.pem"))
        #expect(app.authKey(for: .production) == "apps.news.auth")
        #expect(
            configuration.referencedFiles.map(\.key) == [
                "apps.news.auth.token.key-file",
                "apps.news.auth.sandbox.certificate.certificate-file", "apps.news.auth.sandbox.certificate.key-file",
            ])
    }

    @Test func anEnvironmentWithoutACredentialIsNamed() throws {
        let error = try #require(parseError(yaml(auth: Self.sandboxCertificate)))
        #expect(error.key == "apps.news.auth.production")
        #expect(error.message == "is required")
        // Sending to the sandbox only, its own credential is enough.
        let sandboxOnly = minimalYAML.replacingOccurrences(
            of: "    auth:\n" + Self.tokenLine, with: "    environments: [sandbox]\n    auth:\n" + Self.sandboxCertificate)
        #expect(
            try parse(sandboxOnly).apps["news"]?.auth(for: .sandbox)
                == .certificate(certificateFile: "/etc/pushfleet/dev.pem", keyFile: "/etc/pushfleet/dev-key.pem"))
    }

    @Test func aCredentialForAnEnvironmentTheAppDoesNotSendToIsRefused() throws {
        let yaml = minimalYAML.replacingOccurrences(
            of: "    auth:\n" + Self.tokenLine, with: "    environments: [production]\n    auth:\n" + Self.tokenLine + Self.sandboxCertificate)
        let error = try #require(parseError(yaml))
        #expect(error.key == "apps.news.auth.sandbox")
        #expect(error.message.contains("does not send to sandbox"))
    }

    @Test func anEnvironmentsOwnCredentialNeedsOneMethod() throws {
        let error = try #require(parseError(yaml(auth: Self.tokenLine + "      production: {}\n")))
        #expect(error.key == "apps.news.auth.production")
        #expect(error.message.contains("exactly one of token, certificate or pkcs12"))
        let missing = try #require(parseError(yaml(auth: "      sandbox:\n        certificate: {key-file: k}\n" + Self.productionCertificate)))
        #expect(missing.key == "apps.news.auth.sandbox.certificate.certificate-file")
    }
}
