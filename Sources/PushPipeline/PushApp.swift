public import APNs
import Foundation
public import PushConfiguration

/// An app as the workers use it: its settings and the APNs credential loaded from its files.
public struct PushApp: Sendable {
    public let settings: AppSettings
    public let credential: APNsCredential

    public var id: String { settings.id }

    public init(settings: AppSettings, credential: APNsCredential) {
        self.settings = settings
        self.credential = credential
    }

    /// Loads the app's key or certificate files.
    ///
    /// - Throws: ``ConfigurationError`` naming the app's `auth` key when a file cannot be read.
    public static func load(_ settings: AppSettings) throws(ConfigurationError) -> PushApp {
        let key = "apps.\(settings.id).auth"
        func read(_ path: String, _ field: String) throws(ConfigurationError) -> String {
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
                throw ConfigurationError(key: "\(key).\(field)", message: "cannot read \(path)")
            }
            return text
        }
        let credential: APNsCredential
        switch settings.auth {
        case .token(let teamID, let keyID, let keyFile):
            credential = .token(teamID: teamID, keyID: keyID, privateKeyPEM: try read(keyFile, "token.key-file"))
        case .certificate(let certificateFile, let keyFile):
            credential = .certificate(
                name: settings.id,
                certificateChainPEM: try read(certificateFile, "certificate.certificate-file"),
                privateKeyPEM: try read(keyFile, "certificate.key-file"))
        case .pkcs12(let file, let passphraseFile):
            guard let bytes = FileManager.default.contents(atPath: file) else {
                throw ConfigurationError(key: "\(key).pkcs12.file", message: "cannot read \(file)")
            }
            let passphrase = try passphraseFile.map { path throws(ConfigurationError) in
                try read(path, "pkcs12.passphrase-file").trimmingCharacters(in: .newlines)
            }
            credential = .pkcs12(name: settings.id, bytes: Array(bytes), passphrase: passphrase)
        }
        return PushApp(settings: settings, credential: credential)
    }
}
