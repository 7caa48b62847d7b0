import APNsCore
import Crypto
import Foundation

/// Checks ES256 provider tokens (JWTs) against the simulator's keys. Pure apart from the keys.
struct APNsSimulatorProviderTokenVerifier: Sendable {
    /// A token whose signature verified.
    struct VerifiedToken: Sendable {
        let raw: Substring
        let key: APNsSimulatorProviderKey
        let issuedAt: Int64
    }

    enum Failure: Error {
        /// Malformed, unknown key, wrong algorithm, bad signature, issuer not the key's team.
        case invalid
    }

    private struct Header: Decodable {
        let alg: String
        let kid: String
    }

    private struct Claims: Decodable {
        let iss: String
        let iat: Int64
    }

    private let keys: [String: APNsSimulatorProviderKey]

    init(keys: [APNsSimulatorProviderKey]) {
        self.keys = Dictionary(keys.map { ($0.keyID, $0) }, uniquingKeysWith: { _, last in last })
    }

    func verify(_ token: Substring) throws(Failure) -> VerifiedToken {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]).map({ Data($0) }),
            let claimsBytes = Base64URL.decode(parts[1]).map({ Data($0) }),
            let signatureBytes = Base64URL.decode(parts[2]),
            let header = try? JSONDecoder().decode(Header.self, from: headerBytes),
            let claims = try? JSONDecoder().decode(Claims.self, from: claimsBytes),
            header.alg == "ES256",
            let key = keys[header.kid],
            claims.iss == key.teamID,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            let publicKey = try? P256.Signing.PublicKey(x963Representation: key.publicKeyX963)
        else { throw .invalid }
        let signedPart = token[token.startIndex..<parts[1].endIndex]
        guard publicKey.isValidSignature(signature, for: Data(signedPart.utf8)) else {
            throw .invalid
        }
        return VerifiedToken(raw: token, key: key, issuedAt: claims.iat)
    }
}
