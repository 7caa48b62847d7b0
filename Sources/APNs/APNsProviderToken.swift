import APNsCore
import Crypto
import Foundation

/// A provider authentication token: an ES256-signed JWT with header `alg`/`kid` and claims
/// `iss` (team id) and `iat` (issue time, seconds since 1970).
public struct APNsProviderToken: Sendable, Hashable, CustomStringConvertible {
    /// The compact JWT, sent as `authorization: bearer <value>`.
    public let value: String
    /// The `iat` claim.
    public let issuedAt: Date
    /// `bearer <value>`, built once rather than for every request.
    let authorization: String

    /// Signs a new token.
    public init(teamID: String, keyID: String, privateKey: P256.Signing.PrivateKey, issuedAt: Date) throws {
        let iat = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
        let header = Base64URL.encode(Array(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8))
        let claims = Base64URL.encode(Array(#"{"iss":"\#(teamID)","iat":\#(iat)}"#.utf8))
        let signingInput = header + "." + claims
        let signature = try privateKey.signature(for: Data(signingInput.utf8))
        self.value = signingInput + "." + Base64URL.encode(Array(signature.rawRepresentation))
        self.issuedAt = Date(timeIntervalSince1970: TimeInterval(iat))
        self.authorization = "bearer " + value
    }

    /// The token text is a credential: it is not printed.
    public var description: String { "APNsProviderToken(issuedAt: \(issuedAt))" }
}
