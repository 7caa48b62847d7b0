public import APNs
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

    /// Loads the app's key or certificate files (``AppSettings/readCredentialFiles()``).
    ///
    /// - Throws: ``ConfigurationError`` naming the file's setting when a file cannot be read or
    ///   is empty.
    public static func load(_ settings: AppSettings) throws(ConfigurationError) -> PushApp {
        let credential: APNsCredential
        switch try settings.readCredentialFiles() {
        case .token(let teamID, let keyID, let privateKeyPEM):
            credential = .token(teamID: teamID, keyID: keyID, privateKeyPEM: privateKeyPEM)
        case .certificate(let certificateChainPEM, let privateKeyPEM):
            credential = .certificate(name: settings.id, certificateChainPEM: certificateChainPEM, privateKeyPEM: privateKeyPEM)
        case .pkcs12(let bytes, let passphrase):
            credential = .pkcs12(name: settings.id, bytes: bytes, passphrase: passphrase)
        }
        return PushApp(settings: settings, credential: credential)
    }
}
