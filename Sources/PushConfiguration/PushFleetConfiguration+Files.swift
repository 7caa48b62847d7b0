import APNsCore
import Foundation

extension PushFleetConfiguration {
    /// Checks that every referenced file exists, is a regular file and is readable: `apns.ca-file`,
    /// `redis.password-file`, and each app's key, certificate, PKCS#12 and passphrase files (apps in id
    /// order). ``load(path:environment:)`` calls it.
    ///
    /// - Throws: A ``ConfigurationError`` naming the key, e.g. `apps.news.auth.token.key-file`.
    public func validateFiles() throws(ConfigurationError) {
        for (key, path) in referencedFiles {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw ConfigurationError(key: key, message: "file '\(path)' does not exist")
            }
            guard !isDirectory.boolValue else {
                throw ConfigurationError(key: key, message: "'\(path)' is a directory, not a file")
            }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw ConfigurationError(key: key, message: "file '\(path)' is not readable")
            }
        }
    }

    /// Every file path in the configuration with the dotted key that set it, in a stable order.
    var referencedFiles: [(key: String, path: String)] {
        var files: [(key: String, path: String)] = []
        if let caFile = apns.caFile { files.append(("apns.ca-file", caFile)) }
        if let passwordFile = redis.passwordFile { files.append(("redis.password-file", passwordFile)) }
        for app in apps.values.sorted(by: { $0.id < $1.id }) {
            if let apiKeysFile = app.apiKeysFile { files.append(("apps.\(app.id).api-keys-file", apiKeysFile)) }
            // The shared credential when an environment uses it, then each environment's own.
            var credentials: [(prefix: String, auth: AppAuth)] = []
            if app.environments.contains(where: { app.environmentAuth[$0] == nil }) {
                credentials.append(("apps.\(app.id).auth", app.auth))
            }
            for environment in APNsEnvironment.allCases {
                if let auth = app.environmentAuth[environment] { credentials.append((app.authKey(for: environment), auth)) }
            }
            for (prefix, auth) in credentials {
                switch auth {
                case .token(_, _, let keyFile):
                    files.append(("\(prefix).token.key-file", keyFile))
                case .certificate(let certificateFile, let keyFile):
                    files.append(("\(prefix).certificate.certificate-file", certificateFile))
                    files.append(("\(prefix).certificate.key-file", keyFile))
                case .pkcs12(let file, let passphraseFile):
                    files.append(("\(prefix).pkcs12.file", file))
                    if let passphraseFile { files.append(("\(prefix).pkcs12.passphrase-file", passphraseFile)) }
                }
            }
        }
        return files
    }
}
