public import APNsCore
import Crypto

/// A short-lived credential that lets one device of one app open one online-channel connection:
/// `v1.<claims>.<mac>`, base64url, where the claims are the app id, the device token and the
/// expiry (Unix seconds), and the MAC is HMAC-SHA256 over them under `gateway.secret-file`.
///
/// Why a token of its own and not the device key: the API issues it to an app that presents a
/// device key (and only for a device registered in the app), so the gateway learns the device's
/// identity without reading the registry or holding API keys, and a token leaked from a
/// connection's URL or a proxy's log opens nothing after its few minutes and names one device
/// only. The device key itself never travels on the connection.
public struct ConnectToken: Sendable {
    /// Who the token lets in, and until when.
    public struct Claims: Sendable, Hashable {
        public var app: String
        public var device: DeviceToken
        /// Seconds since 1970 after which the token opens nothing.
        public var expiresAt: Int64

        public init(app: String, device: DeviceToken, expiresAt: Int64) {
            self.app = app
            self.device = device
            self.expiresAt = expiresAt
        }
    }

    /// Why a token was refused.
    public enum Refusal: Error, Sendable, Hashable {
        /// Not a connect token at all (shape, encoding, claims).
        case malformed
        /// Not signed with this fleet's key (or altered).
        case forged
        /// Past its expiry.
        case expired
        /// Issued for another app than the connection's path names.
        case otherApp
    }

    static let version = "v1"
    /// Domain separation: these MACs verify nothing but connect tokens of this version.
    private static let context = Array("pushfleet-connect-v1\n".utf8)

    /// The signing key: `gateway.secret-file`'s bytes (`SymmetricKey` is not `Sendable`).
    private let secret: [UInt8]

    public init(secret: [UInt8]) {
        self.secret = secret
    }

    private var key: SymmetricKey { SymmetricKey(data: secret) }

    /// The token text for `claims`.
    public func issue(_ claims: Claims) -> String {
        let body = Array("\(claims.app)\n\(claims.device.hex)\n\(claims.expiresAt)".utf8)
        let mac = HMAC<SHA256>.authenticationCode(for: Self.context + body, using: key)
        return "\(Self.version).\(Base64URL.encode(body)).\(Base64URL.encode(Array(mac)))"
    }

    /// The claims of `text`, if it is a token this key signed, for `app`, not expired at `now`
    /// (Unix seconds). The MAC is checked before the claims are read, in constant time.
    public func verify(_ text: some StringProtocol, app: String, now: Int64) throws(Refusal) -> Claims {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Self.version, let body = Base64URL.decode(parts[1]),
            let mac = Base64URL.decode(parts[2]), mac.count == SHA256.byteCount
        else { throw .malformed }
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Self.context + body, using: key) else {
            throw .forged
        }
        let fields = String(decoding: body, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard fields.count == 3, let expiresAt = Int64(fields[2]), let device = try? DeviceToken(hex: String(fields[1])) else {
            throw .malformed
        }
        guard String(fields[0]) == app else { throw .otherApp }
        guard now <= expiresAt else { throw .expired }
        return Claims(app: app, device: device, expiresAt: expiresAt)
    }
}
