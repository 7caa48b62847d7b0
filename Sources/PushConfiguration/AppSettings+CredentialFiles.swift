import APNsCore

/// What an app's credential files hold, read the one way every secret file is read
/// (``SecretFile``): a file that cannot be read, is empty or (for PEM) is not UTF-8 is a
/// configuration error naming its key, and no error holds a file's contents.
public enum CredentialFiles: Sendable {
    case token(teamID: String, keyID: String, privateKeyPEM: String)
    case certificate(certificateChainPEM: String, privateKeyPEM: String)
    case pkcs12(bytes: [UInt8], passphrase: String?)
}

extension AppSettings {
    /// Reads the files of the credential the app sends to `environment` with (``auth(for:)``).
    ///
    /// - Throws: A ``ConfigurationError`` keyed by the file's setting, such as
    ///   `apps.<id>.auth.token.key-file` or `apps.<id>.auth.sandbox.certificate.key-file`.
    public func readCredentialFiles(for environment: APNsEnvironment) throws(ConfigurationError) -> CredentialFiles {
        let key = authKey(for: environment)
        switch auth(for: environment) {
        case .token(let teamID, let keyID, let keyFile):
            return .token(teamID: teamID, keyID: keyID, privateKeyPEM: try SecretFile.read(keyFile, key: "\(key).token.key-file"))
        case .certificate(let certificateFile, let keyFile):
            return .certificate(
                certificateChainPEM: try SecretFile.read(certificateFile, key: "\(key).certificate.certificate-file"),
                privateKeyPEM: try SecretFile.read(keyFile, key: "\(key).certificate.key-file"))
        case .pkcs12(let file, let passphraseFile):
            return .pkcs12(
                bytes: try SecretFile.bytes(file, key: "\(key).pkcs12.file"),
                passphrase: try passphraseFile.map { (path) throws(ConfigurationError) in
                    try SecretFile.read(path, key: "\(key).pkcs12.passphrase-file")
                })
        }
    }

    /// The dotted key of the credential of `environment`: `apps.<id>.auth`, or
    /// `apps.<id>.auth.<environment>` for an environment's own.
    public func authKey(for environment: APNsEnvironment) -> String {
        environmentAuth[environment] == nil ? "apps.\(id).auth" : "apps.\(id).auth.\(environment.rawValue)"
    }
}
