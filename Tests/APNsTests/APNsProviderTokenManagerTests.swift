import APNs
import Crypto
import Foundation
import Synchronization
import Testing

/// Provider token lifetime rules, with an injected clock.
@Suite("Provider tokens")
struct APNsProviderTokenManagerTests {
    /// A clock tests move by hand.
    final class TestClock: Sendable {
        private let current: Mutex<Date>

        init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
            current = Mutex(start)
        }

        var now: Date { current.withLock { $0 } }

        func advance(minutes: Double) {
            current.withLock { $0 = $0.addingTimeInterval(minutes * 60) }
        }
    }

    let key = P256.Signing.PrivateKey()
    let clock = TestClock()

    func makeManager() throws -> APNsProviderTokenManager {
        let clock = self.clock
        return try APNsProviderTokenManager(
            teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: key.pemRepresentation, now: { clock.now })
    }

    @Test("the same token is reused for 50 minutes")
    func reuse() async throws {
        let manager = try makeManager()
        let first = try await manager.token()
        clock.advance(minutes: 49.9)
        #expect(try await manager.token() == first)
        #expect(await manager.tokensIssued == 1)
    }

    @Test("a new token is issued at 50 minutes")
    func refreshAtFifty() async throws {
        let manager = try makeManager()
        let first = try await manager.token()
        clock.advance(minutes: 50)
        let second = try await manager.token()
        #expect(second != first)
        #expect(second.issuedAt == clock.now)
        #expect(await manager.tokensIssued == 2)
    }

    @Test("ExpiredProviderToken does not replace a token younger than 20 minutes")
    func neverTwiceWithinTwenty() async throws {
        let manager = try makeManager()
        let first = try await manager.token()
        clock.advance(minutes: 19.9)
        #expect(try await manager.token(replacing: first) == nil)
        #expect(await manager.tokensIssued == 1)
        clock.advance(minutes: 0.1)
        let second = try #require(try await manager.token(replacing: first))
        #expect(second != first)
        // Every connection that saw `first` rejected gets the same replacement, not another one.
        #expect(try await manager.token(replacing: first) == second)
        #expect(try await manager.token(replacing: second) == nil)
        #expect(await manager.tokensIssued == 2)
    }

    @Test("many concurrent callers share one token")
    func shared() async throws {
        let manager = try makeManager()
        let tokens = try await withThrowingTaskGroup(of: APNsProviderToken.self) { group in
            for _ in 0..<50 {
                group.addTask { try await manager.token() }
            }
            return try await group.reduce(into: Set<APNsProviderToken>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1)
        #expect(await manager.tokensIssued == 1)
    }

    @Test("the JWT is ES256 with kid, iss and iat, and verifies")
    func format() async throws {
        let token = try await makeManager().token()
        let parts = token.value.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try JSONSerialization.jsonObject(with: Self.decode(parts[0])) as? [String: Any]
        let claims = try JSONSerialization.jsonObject(with: Self.decode(parts[1])) as? [String: Any]
        #expect(header?["alg"] as? String == "ES256")
        #expect(header?["kid"] as? String == "KEY1234567")
        #expect(claims?["iss"] as? String == "TEAM123456")
        #expect((claims?["iat"] as? NSNumber)?.int64Value == 1_800_000_000)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: Self.decode(parts[2]))
        #expect(key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
        #expect(!"\(token)".contains(parts[2]))
    }

    static func decode(_ base64URL: String) -> Data {
        var text = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)!
    }
}
