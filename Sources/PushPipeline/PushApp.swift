public import APNs
public import APNsCore
import Foundation
public import PushConfiguration
public import PushCore

/// An app as the workers use it: its settings and the APNs credentials loaded from its files,
/// one per environment (shared when the app has one credential for both).
public struct PushApp: Sendable {
    public let settings: AppSettings
    /// The credential of each environment (``credential(for:)``).
    public let credentials: [APNsEnvironment: APNsCredential]

    public var id: String { settings.id }

    /// An app whose environments all send with `credential`.
    public init(settings: AppSettings, credential: APNsCredential) {
        self.init(settings: settings, credentials: [.sandbox: credential, .production: credential])
    }

    public init(settings: AppSettings, credentials: [APNsEnvironment: APNsCredential]) {
        precondition(APNsEnvironment.allCases.allSatisfy { credentials[$0] != nil }, "a credential for every environment")
        self.settings = settings
        self.credentials = credentials
    }

    /// The credential the app sends to `environment` with (``AppSettings/auth(for:)``).
    public func credential(for environment: APNsEnvironment) -> APNsCredential {
        credentials[environment]!
    }

    /// Loads the app's key or certificate files (``AppSettings/readCredentialFiles(for:)``),
    /// each credential once (environments with the same one share it): an environment's own
    /// credential is named `<app>/<environment>`, the shared one `<app>`.
    ///
    /// - Throws: ``ConfigurationError`` naming the file's setting when a file cannot be read or
    ///   is empty.
    public static func load(_ settings: AppSettings) throws(ConfigurationError) -> PushApp {
        var loaded: [(auth: AppAuth, credential: APNsCredential)] = []
        var credentials: [APNsEnvironment: APNsCredential] = [:]
        for environment in APNsEnvironment.allCases {
            let auth = settings.auth(for: environment)
            if let known = loaded.first(where: { $0.auth == auth }) {
                credentials[environment] = known.credential
                continue
            }
            let name = settings.environmentAuth[environment] == nil ? settings.id : "\(settings.id)/\(environment.rawValue)"
            let credential: APNsCredential
            switch try settings.readCredentialFiles(for: environment) {
            case .token(let teamID, let keyID, let privateKeyPEM):
                credential = .token(teamID: teamID, keyID: keyID, privateKeyPEM: privateKeyPEM)
            case .certificate(let certificateChainPEM, let privateKeyPEM):
                credential = .certificate(name: name, certificateChainPEM: certificateChainPEM, privateKeyPEM: privateKeyPEM)
            case .pkcs12(let bytes, let passphrase):
                credential = .pkcs12(name: name, bytes: bytes, passphrase: passphrase)
            }
            loaded.append((auth, credential))
            credentials[environment] = credential
        }
        return PushApp(settings: settings, credentials: credentials)
    }
}

extension PushApp {
    /// The expiry of the certificate of each environment the app sends to, for apps that
    /// authenticate with certificates (none for signing keys), in the order of its environments.
    ///
    /// - Throws: ``ConfigurationError`` naming the credential's setting when its certificate
    ///   cannot be read (the error holds no key material).
    public func certificateExpiries() throws(ConfigurationError) -> [CertificateExpiry] {
        var expiries: [CertificateExpiry] = []
        for environment in settings.environments {
            let notValidAfter: Date?
            do {
                notValidAfter = try credential(for: environment).certificateNotValidAfter()
            } catch {
                throw ConfigurationError(
                    key: settings.authKey(for: environment),
                    message: "the certificate cannot be read: \(error.underlying.map { "\($0)" } ?? "\(error.code)")")
            }
            guard let notValidAfter else { continue }
            expiries.append(
                CertificateExpiry(app: id, environment: environment, notValidAfter: Int64((notValidAfter.timeIntervalSince1970 * 1000).rounded())))
        }
        return expiries
    }
}
