import APNsCore
import Foundation
import PushConfiguration
import Testing

/// An app's credential files are read like every other secret file: unreadable or empty files are
/// errors naming their setting, one trailing newline of a text file is dropped, and no error holds
/// a file's contents.
@Suite struct CredentialFileTests {
    static let secret = "-----BEGIN PRIVATE KEY-----\nMIGTAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHkwdwIBAQQg\n-----END PRIVATE KEY-----"

    /// A fresh directory with `files` written into it.
    static func directory(_ files: [String: Data]) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-credentials-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, contents) in files {
            try contents.write(to: directory.appendingPathComponent(name))
        }
        return directory
    }

    static func app(_ auth: AppAuth) -> AppSettings {
        AppSettings(id: "news", bundleID: "com.example.news", auth: auth)
    }

    @Test("a token key is read with one trailing newline dropped")
    func tokenKey() throws {
        let directory = try Self.directory(["k.p8": Data((Self.secret + "\n").utf8)])
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try Self.app(.token(teamID: "T", keyID: "K", keyFile: directory.appendingPathComponent("k.p8").path)).readCredentialFiles(
            for: .sandbox)
        guard case .token(let teamID, let keyID, let pem) = files else {
            Issue.record("not a token credential: \(files)")
            return
        }
        #expect(teamID == "T" && keyID == "K" && pem == Self.secret)
    }

    @Test(
        "an empty or missing key, certificate or bundle file is an error naming its setting",
        arguments: [
            ("token", "apps.news.auth.token.key-file"), ("certificate", "apps.news.auth.certificate.certificate-file"),
            ("certificate-key", "apps.news.auth.certificate.key-file"), ("pkcs12", "apps.news.auth.pkcs12.file"),
            ("passphrase", "apps.news.auth.pkcs12.passphrase-file"),
        ])
    func emptyOrMissing(kind: String, key: String) throws {
        let directory = try Self.directory(["full": Data((Self.secret + "\n").utf8), "empty": Data()])
        defer { try? FileManager.default.removeItem(at: directory) }
        let full = directory.appendingPathComponent("full").path
        for (name, message) in [("empty", "is empty"), ("missing", "cannot read")] {
            let path = directory.appendingPathComponent(name).path
            let auth: AppAuth =
                switch kind {
                case "token": .token(teamID: "T", keyID: "K", keyFile: path)
                case "certificate": .certificate(certificateFile: path, keyFile: full)
                case "certificate-key": .certificate(certificateFile: full, keyFile: path)
                case "pkcs12": .pkcs12(file: path, passphraseFile: full)
                default: .pkcs12(file: full, passphraseFile: path)
                }
            #expect {
                _ = try Self.app(auth).readCredentialFiles(for: .sandbox)
            } throws: { error in
                guard let error = error as? ConfigurationError else { return false }
                return error.key == key && error.message.contains(message) && !error.description.contains("PRIVATE KEY")
            }
        }
    }

    @Test("a PKCS#12 passphrase loses one trailing newline, not more, and not leading ones")
    func passphrase() throws {
        for (written, read) in [("pass\n", "pass"), ("pass\r\n", "pass"), ("pass\n\n", "pass\n"), ("\npass", "\npass"), ("pass", "pass")] {
            let directory = try Self.directory(["bundle.p12": Data([0x30, 0x82, 0x01]), "passphrase": Data(written.utf8)])
            defer { try? FileManager.default.removeItem(at: directory) }
            let files = try Self.app(
                .pkcs12(
                    file: directory.appendingPathComponent("bundle.p12").path, passphraseFile: directory.appendingPathComponent("passphrase").path)
            ).readCredentialFiles(for: .sandbox)
            guard case .pkcs12(let bytes, let passphrase) = files else {
                Issue.record("not a PKCS#12 credential: \(files)")
                return
            }
            #expect(bytes == [0x30, 0x82, 0x01])
            #expect(passphrase == read, "written \(written.debugDescription)")
        }
    }
}
