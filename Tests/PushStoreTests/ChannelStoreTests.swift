import APNsCore
import Redis
import Testing

@testable import PushStore

@Suite("Broadcast channel store")
struct ChannelStoreTests {
    static func record(_ n: Int, policy: APNsMessageStoragePolicy = .mostRecentMessageStored, at createdAt: Int64 = 1_000) -> ChannelRecord {
        ChannelRecord(id: APNsChannelID("Y2hhbm5lbC\(n)==")!, messageStoragePolicy: policy, createdAt: createdAt)
    }

    @Test("add, read, list oldest first, count and remove, per app and environment")
    func lifecycle() async throws {
        try await withRedis { client async throws in
            let store = ChannelStore(client: client)
            let first = Self.record(1, policy: .noMessageStored, at: 2_000)
            let second = Self.record(2, at: 1_000)
            #expect(try await store.add(app: "a", environment: .sandbox, first))
            #expect(try await store.add(app: "a", environment: .sandbox, second))
            #expect(try await store.channel(app: "a", environment: .sandbox, id: first.id) == first)
            #expect(try await store.channel(app: "a", environment: .production, id: first.id) == nil)
            #expect(try await store.channel(app: "b", environment: .sandbox, id: first.id) == nil)
            #expect(try await store.channels(app: "a", environment: .sandbox) == [second, first])
            #expect(try await store.count(app: "a", environment: .sandbox) == 2)
            #expect(try await store.remove(app: "a", environment: .sandbox, id: first.id))
            #expect(try await !store.remove(app: "a", environment: .sandbox, id: first.id))
            #expect(try await store.channels(app: "a", environment: .sandbox) == [second])
            #expect(try await client.send("HGET", "pf:{a}:channels:sandbox", .string(second.id.rawValue)).string == "1:1000")
        }
    }

    @Test("the limit refuses a new channel but not one already stored")
    func limit() async throws {
        try await withRedis { client async throws in
            let store = ChannelStore(client: client)
            #expect(try await store.add(app: "a", environment: .production, Self.record(1), limit: 2))
            #expect(try await store.add(app: "a", environment: .production, Self.record(2), limit: 2))
            #expect(try await !store.add(app: "a", environment: .production, Self.record(3), limit: 2))
            #expect(try await store.add(app: "a", environment: .production, Self.record(2, at: 5), limit: 2))
            #expect(try await store.add(app: "a", environment: .sandbox, Self.record(3), limit: 2), "each environment has its own limit")
            #expect(try await store.count(app: "a", environment: .production) == 2)
        }
    }

    @Test("a value no version writes is an error, not a channel")
    func corruptValue() async throws {
        try await withRedis { client async throws in
            _ = try await client.send("HSET", "pf:{a}:channels:sandbox", "YQ==", "7:x")
            let store = ChannelStore(client: client)
            await #expect(throws: StoreError.self) { try await store.channel(app: "a", environment: .sandbox, id: APNsChannelID("YQ==")!) }
            await #expect(throws: StoreError.self) { try await store.channels(app: "a", environment: .sandbox) }
        }
    }
}
