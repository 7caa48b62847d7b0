import Crypto
import PushConfiguration

/// The API keys of every app, as SHA-256 digests; a presented key is hashed and compared with
/// each of the app's digests in constant time (every digest is compared, whatever matched).
struct APIKeyring: Sendable {
    private let digests: [String: [[UInt8]]]

    init(_ digests: [String: [APIKeyDigest]]) {
        self.digests = digests.mapValues { $0.map(\.bytes) }
    }

    /// Whether `key` is one of `app`'s keys.
    func accepts(_ key: String, for app: String) -> Bool {
        let presented = Array(SHA256.hash(data: Array(key.utf8)))
        var matched = false
        for digest in digests[app] ?? [] {
            matched = Self.constantTimeEqual(presented, digest) || matched
        }
        return matched
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices {
            difference |= a[index] ^ b[index]
        }
        return difference == 0
    }
}
