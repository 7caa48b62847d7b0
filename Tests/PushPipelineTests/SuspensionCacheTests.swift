import LocalRedis
import PushStore
import Redis
import Testing

@testable import PushPipeline

@Suite("Suspension cache: a refused credential is reported once per suspension")
struct SuspensionCacheTests {
    @Test("the first refusal suspends and says so; the batches after it extend the suspension quietly (real redis-server)")
    func firstRefusalIsNew() async throws {
        try await LocalRedisServer.with { server async throws in
            let client = RedisClient(configuration: server.configuration)
            let cache = SuspensionCache(store: AppSuspension(client: client))
            #expect(try await cache.reason(app: "news") == nil)
            #expect(cache.hold(app: "news", reason: "InvalidProviderToken"), "the first refusal is new")
            try await cache.suspendFleetWide(app: "news", reason: "InvalidProviderToken")
            #expect(!cache.hold(app: "news", reason: "InvalidProviderToken"), "the next batch's is not")
            #expect(cache.hold(app: "shop", reason: "BadCertificate"), "another app's is")
            #expect(try await AppSuspension(client: client).reason(app: "news") == "InvalidProviderToken", "fleet-wide")

            // Lifted fleet-wide (the suspension ran out): once this worker has seen it, a new
            // refusal is new again.
            try await AppSuspension(client: client).lift(app: "news")
            let deadline = ContinuousClock.now + .seconds(5)
            while try await cache.reason(app: "news") != nil, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await cache.reason(app: "news") == nil)
            #expect(cache.hold(app: "news", reason: "InvalidProviderToken"))
            await client.shutdown()
        }
    }
}
