import APNsCore
import Foundation
import PushCore
import Redis
import Testing

@testable import PushStore

@Suite("Live Activity update tokens")
struct ActivityTokenStoreTests {
    static let activity = LiveActivityID("7F0C1A2B-0000-4000-8000-000000000001")!
    static func token(_ n: UInt8) -> DeviceToken { try! DeviceToken(hex: String(repeating: String(format: "%02x", n), count: 32)) }

    @Test("tokens are kept until they expire, per environment, and the set expires with its last token")
    func expiry() async throws {
        try await withRedis { client async throws in
            let store = ActivityTokenStore(client: client)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(
                try await store.register(
                    app: "a", environment: .sandbox, activity: Self.activity, token: Self.token(2), expiresAt: now + 50 * 60_000, now: now))
            #expect(
                try await store.register(
                    app: "a", environment: .sandbox, activity: Self.activity, token: Self.token(1), expiresAt: now + 10 * 60_000, now: now))
            #expect(try await store.tokens(app: "a", environment: .sandbox, activity: Self.activity, now: now) == [Self.token(1), Self.token(2)])
            #expect(
                try await store.tokens(app: "a", environment: .sandbox, activity: Self.activity, now: now + 10 * 60_000) == [Self.token(2)],
                "expired at 10")
            #expect(try await store.tokens(app: "a", environment: .production, activity: Self.activity, now: now).isEmpty)
            // Registered again, a token is kept until its new expiry.
            #expect(
                try await store.register(
                    app: "a", environment: .sandbox, activity: Self.activity, token: Self.token(1), expiresAt: now + 100 * 60_000,
                    now: now + 20 * 60_000))
            #expect(try await store.tokens(app: "a", environment: .sandbox, activity: Self.activity, now: now + 60 * 60_000) == [Self.token(1)])
            let key = ActivityTokenStore.key(app: "a", environment: .sandbox, activity: Self.activity)
            #expect(try await client.send("PEXPIRETIME", .string(key)).int == now + 100 * 60_000)
            #expect(try await store.unregister(app: "a", environment: .sandbox, activity: Self.activity, token: Self.token(1)))
            #expect(try await !store.unregister(app: "a", environment: .sandbox, activity: Self.activity, token: Self.token(1)))
        }
    }

    @Test("an activity holds at most its limit of tokens; a kept one may be registered again")
    func limit() async throws {
        try await withRedis { client async throws in
            let store = ActivityTokenStore(client: client)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            func register(_ n: UInt8, at time: Int64? = nil, expiresAt: Int64? = nil) async throws -> Bool {
                let time = time ?? now
                let expiresAt = expiresAt ?? now + 3_600_000
                return try await store.register(
                    app: "a", environment: .sandbox, activity: Self.activity, token: Self.token(n), expiresAt: expiresAt, now: time, limit: 2)
            }
            #expect(try await register(1, expiresAt: now + 60_000))
            #expect(try await register(2))
            #expect(try await !register(3))
            #expect(try await register(2))
            #expect(try await register(3, at: now + 60_000), "the expired token made room")
        }
    }
}
