import Crypto
import Foundation

/// Issues the provider token of one signing key (team, key id), shared by every connection that
/// uses the key.
///
/// A token is reused until ``APNsProviderTokenPolicy/refreshAfter`` (50 minutes), and never
/// replaced before ``APNsProviderTokenPolicy/minimumLifetime`` (20 minutes), even when APNs
/// calls it expired: Apple answers TooManyProviderTokenUpdates to faster changes.
public actor APNsProviderTokenManager {
    public let teamID: String
    public let keyID: String
    private let privateKey: P256.Signing.PrivateKey
    private let policy: APNsProviderTokenPolicy
    private let now: @Sendable () -> Date
    private var current: APNsProviderToken?
    /// How many tokens this manager has signed.
    public private(set) var tokensIssued = 0

    /// - Parameters:
    ///   - privateKeyPEM: the `.p8` file's text (PKCS#8 PEM of a P-256 key).
    ///   - now: the clock; injected by tests.
    public init(
        teamID: String, keyID: String, privateKeyPEM: String,
        policy: APNsProviderTokenPolicy = APNsProviderTokenPolicy(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        self.teamID = teamID
        self.keyID = keyID
        self.privateKey = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        self.policy = policy
        self.now = now
    }

    /// The token to send now: the current one, or a new one once the current one is
    /// ``APNsProviderTokenPolicy/refreshAfter`` old.
    public func token() throws -> APNsProviderToken {
        if let current, age(of: current) < policy.refreshAfter {
            return current
        }
        return try issue()
    }

    /// The token to retry with after APNs answered ExpiredProviderToken to `rejected`: a new
    /// token when `rejected` is still current and at least
    /// ``APNsProviderTokenPolicy/minimumLifetime`` old, the current one when it already replaced
    /// `rejected`, and `nil` when replacing it now would be too soon.
    public func token(replacing rejected: APNsProviderToken) throws -> APNsProviderToken? {
        guard let current, current == rejected else {
            return try token()
        }
        guard age(of: current) >= policy.minimumLifetime else { return nil }
        return try issue()
    }

    private func issue() throws -> APNsProviderToken {
        let token = try APNsProviderToken(teamID: teamID, keyID: keyID, privateKey: privateKey, issuedAt: now())
        current = token
        tokensIssued += 1
        return token
    }

    private func age(of token: APNsProviderToken) -> Duration {
        .milliseconds(Int64((now().timeIntervalSince(token.issuedAt) * 1000).rounded(.down)))
    }
}
