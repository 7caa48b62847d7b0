import APNsCore
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
            #expect(try await cache.reason(app: "news", environment: .production) == nil)
            #expect(cache.hold(app: "news", environment: .production, reason: "InvalidProviderToken"), "the first refusal is new")
            try await cache.suspendFleetWide(app: "news", environment: .production, reason: "InvalidProviderToken")
            #expect(!cache.hold(app: "news", environment: .production, reason: "InvalidProviderToken"), "the next batch's is not")
            #expect(cache.hold(app: "shop", environment: .production, reason: "BadCertificate"), "another app's is")
            #expect(cache.hold(app: "news", environment: .sandbox, reason: "BadCertificate"), "another environment's is")
            #expect(try await AppSuspension(client: client).reason(app: "news", environment: .production) == "InvalidProviderToken", "fleet-wide")

            // Lifted fleet-wide (the suspension ran out): once this worker has seen it, a new
            // refusal is new again.
            try await AppSuspension(client: client).lift(app: "news", environment: .production)
            let deadline = ContinuousClock.now + .seconds(5)
            while try await cache.reason(app: "news", environment: .production) != nil, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await cache.reason(app: "news", environment: .production) == nil)
            #expect(cache.hold(app: "news", environment: .production, reason: "InvalidProviderToken"))
            await client.shutdown()
        }
    }

    @Test("a suspension lasts the configured time (apns.credential-suspension-seconds), a minute by default (real redis-server)")
    func configuredDuration() async throws {
        try await LocalRedisServer.with { server async throws in
            let client = RedisClient(configuration: server.configuration)
            let key = "pf:{news}:suspended:production"
            for (cache, seconds) in [
                (SuspensionCache(store: AppSuspension(client: client)), 60),
                (SuspensionCache(store: AppSuspension(client: client), duration: .seconds(7)), 7),
            ] {
                #expect(cache.duration == .seconds(seconds))
                let started = ContinuousClock.now
                try await cache.suspendFleetWide(app: "news", environment: .production, reason: "InvalidProviderToken")
                let left = try #require(try await client.send("PTTL", .string(key)).int)
                // What passed between the suspension and the read is all the TTL may have lost
                // (1 ms for PTTL's rounding), however loaded the machine is.
                let elapsed = (ContinuousClock.now - started).components
                let elapsedMilliseconds = Int(elapsed.seconds) * 1_000 + Int(elapsed.attoseconds / 1_000_000_000_000_000) + 1
                #expect(
                    left >= Int64(seconds * 1_000 - elapsedMilliseconds - 1) && left <= seconds * 1_000,
                    "\(left) ms left of \(seconds) s, \(elapsedMilliseconds) ms after the suspension")
                try await AppSuspension(client: client).lift(app: "news", environment: .production)
            }
            await client.shutdown()
        }
    }
}
