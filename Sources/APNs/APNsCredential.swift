/// How a provider proves who it is to APNs: a provider token signing key (`.p8`) or a client
/// certificate. One connection pool exists per (credential, environment).
///
/// Credentials are identified by ``id``: two values with the same id are the same credential.
/// The description never contains key material.
public struct APNsCredential: Sendable, Hashable, CustomStringConvertible {
    /// The secret material.
    public enum Material: Sendable {
        /// An ES256 signing key for provider tokens: the team id (JWT `iss`), key id (`kid`) and
        /// the `.p8` file's PEM.
        case token(teamID: String, keyID: String, privateKeyPEM: String)
        /// A client certificate chain and its private key, PEM.
        case certificate(certificateChainPEM: String, privateKeyPEM: String)
        /// A client certificate and key in a PKCS#12 bundle.
        case pkcs12(bytes: [UInt8], passphrase: String?)
    }

    /// Identifies the credential: `token/<team>/<key>` or `certificate/<name>`.
    public let id: String
    /// The secret material.
    public let material: Material

    /// Token-based authentication with a `.p8` key.
    public static func token(teamID: String, keyID: String, privateKeyPEM: String) -> APNsCredential {
        APNsCredential(id: "token/\(teamID)/\(keyID)", material: .token(teamID: teamID, keyID: keyID, privateKeyPEM: privateKeyPEM))
    }

    /// Certificate-based authentication from PEM; `name` distinguishes certificates (e.g. the
    /// bundle id).
    public static func certificate(name: String, certificateChainPEM: String, privateKeyPEM: String) -> APNsCredential {
        APNsCredential(
            id: "certificate/\(name)",
            material: .certificate(certificateChainPEM: certificateChainPEM, privateKeyPEM: privateKeyPEM))
    }

    /// Certificate-based authentication from a PKCS#12 bundle.
    public static func pkcs12(name: String, bytes: [UInt8], passphrase: String?) -> APNsCredential {
        APNsCredential(id: "certificate/\(name)", material: .pkcs12(bytes: bytes, passphrase: passphrase))
    }

    public static func == (lhs: APNsCredential, rhs: APNsCredential) -> Bool { lhs.id == rhs.id }

    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    public var description: String { "APNsCredential(\(id))" }
}

/// Key material never shows up in `dump` or reflection.
extension APNsCredential: CustomReflectable {
    public var customMirror: Mirror { Mirror(self, children: ["id": id]) }
}

extension APNsCredential.Material: CustomStringConvertible, CustomReflectable {
    public var description: String {
        switch self {
        case .token(let teamID, let keyID, _): "token(teamID: \(teamID), keyID: \(keyID), privateKey: <redacted>)"
        case .certificate: "certificate(<redacted>)"
        case .pkcs12: "pkcs12(<redacted>)"
        }
    }

    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
