import APNsCore
import Crypto

/// A provider token signing key the simulator accepts, as Apple knows it: its key id, the team
/// it belongs to, and the environments it may be used in.
public struct APNsSimulatorProviderKey: Sendable {
    public var keyID: String
    public var teamID: String
    /// The public key in ANSI X9.63 form (what `P256.Signing.PublicKey.x963Representation` gives).
    public var publicKeyX963: [UInt8]
    /// `nil` allows both environments (Apple's default for new keys).
    public var environment: APNsEnvironment?

    public init(
        keyID: String, teamID: String, publicKey: P256.Signing.PublicKey,
        environment: APNsEnvironment? = nil
    ) {
        self.keyID = keyID
        self.teamID = teamID
        self.publicKeyX963 = Array(publicKey.x963Representation)
        self.environment = environment
    }

    /// A key from the PEM of its public key (the public half of a `.p8` file).
    public init(
        keyID: String, teamID: String, publicKeyPEM: String, environment: APNsEnvironment? = nil
    ) throws {
        try self.init(
            keyID: keyID, teamID: teamID,
            publicKey: P256.Signing.PublicKey(pemRepresentation: publicKeyPEM),
            environment: environment)
    }

    /// A key from a PEM file's text: a public key, or the `.p8` private key itself (the
    /// simulator keeps only its public half).
    public init(keyID: String, teamID: String, pem: String, environment: APNsEnvironment? = nil) throws {
        let publicKey: P256.Signing.PublicKey
        if pem.contains("PRIVATE KEY") {
            publicKey = try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey
        } else {
            publicKey = try P256.Signing.PublicKey(pemRepresentation: pem)
        }
        self.init(keyID: keyID, teamID: teamID, publicKey: publicKey, environment: environment)
    }
}
