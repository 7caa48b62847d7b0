/// How an app authenticates to APNs (`apps.<id>.auth:`): exactly one of the three.
public enum AppAuth: Sendable, Equatable {
    /// Token (JWT) authentication (`token: {team-id, key-id, key-file}`): a 10-character team id, a
    /// 10-character key id and the absolute path of the `.p8` signing key.
    case token(teamID: String, keyID: String, keyFile: String)
    /// TLS client certificate (`certificate: {certificate-file, key-file}`): absolute paths of the PEM
    /// certificate and its PEM private key.
    case certificate(certificateFile: String, keyFile: String)
    /// TLS client identity in a PKCS#12 bundle (`pkcs12: {file, passphrase-file}`): absolute paths of
    /// the bundle and, optionally, of a file holding its passphrase.
    case pkcs12(file: String, passphraseFile: String?)
}
