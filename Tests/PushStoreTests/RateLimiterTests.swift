import Redis
import Testing

@testable import PushStore

@Suite("Rate limiter")
struct RateLimiterTests {
    let app = "rate"

    @Test func aFreshBucketGrantsItsBurstThenWaits() async throws {
        try await withRedis { client async throws in
            let limiter = RateLimiter(client: client)
            let rate = 2.0
            let start = try await client.serverMicroseconds()
            let first = try await limiter.acquire(app: app, ratePerSecond: rate, burst: 5, requested: 5)
            #expect(first == RateGrant(granted: 5, retryAfter: .zero))
            let second = try await limiter.acquire(app: app, ratePerSecond: rate, burst: 5, requested: 3)
            let elapsed = Double(try await client.serverMicroseconds() - start) / 1_000_000
            // At most rate × elapsed permits accrued since the bucket was created.
            let accrued = rate * elapsed
            #expect(Double(second.granted) <= accrued)
            let missing = Double(3 - second.granted)
            let wait = Double(second.retryAfter.components.seconds) + Double(second.retryAfter.components.attoseconds) / 1e18
            // 1/rate per missing permit, less what accrued meanwhile (at most a permit's worth).
            #expect(wait <= missing / rate + 1e-6)
            #expect(wait >= (missing - min(accrued, 1)) / rate - 1e-6)
            #expect(second.granted < 3)
        }
    }

    @Test func grantsArePartialNeverMoreThanAvailable() async throws {
        try await withRedis { client async throws in
            let limiter = RateLimiter(client: client)
            // One permit per 1,000 s: next to nothing accrues during the test.
            let rate = 0.001
            #expect(try await limiter.acquire(app: app, ratePerSecond: rate, burst: 5, requested: 3).granted == 3)
            let partial = try await limiter.acquire(app: app, ratePerSecond: rate, burst: 5, requested: 3)
            #expect(partial.granted == 2)
            // One permit missing: just under 1,000 s.
            #expect(partial.retryAfter <= .seconds(1_000))
            #expect(partial.retryAfter > .seconds(990))
            let none = try await limiter.acquire(app: app, ratePerSecond: rate, burst: 5, requested: 4)
            #expect(none.granted == 0)
            #expect(none.retryAfter <= .seconds(4_000))
            #expect(none.retryAfter > .seconds(3_990))
        }
    }

    @Test func fractionalAccrualIsKept() async throws {
        try await withRedis { client async throws in
            let limiter = RateLimiter(client: client)
            let key = RateLimiter.key(app: app, scope: nil)
            let rate = 1_000.0
            // A bucket so large that it never fills up again during the test: no accrual is capped.
            let burst = 1_000_000
            #expect(try await limiter.acquire(app: app, ratePerSecond: rate, burst: burst, requested: burst).granted == burst)
            let drainedAt = try #require(try await client.send("HGET", .string(key), "at").int)
            var granted = 0
            for _ in 0..<300 {
                granted += try await limiter.acquire(app: app, ratePerSecond: rate, burst: burst, requested: 1).granted
            }
            let fields = try #require(try await client.send("HMGET", .string(key), "tokens", "at").array)
            let left = try #require(fields[0].string.flatMap(Double.init))
            let lastAt = try #require(fields[1].int)
            // Calls a fraction of a millisecond apart accrue a fraction of a permit each: only if
            // every fraction is kept do grants plus what is left equal what accrued on Redis's clock.
            let accrued = rate * Double(lastAt - drainedAt) / 1_000_000
            #expect(abs(Double(granted) + left - accrued) < 1e-6, "granted \(granted) + left \(left) vs accrued \(accrued)")
            #expect(granted <= 300)
            // The key expires once the bucket would be full again (an absent bucket is full).
            let ttl = try await client.pttl(key)
            #expect(ttl > 0 && ttl <= Int64((Double(burst) - left) / rate * 1_000) + 1_001)
        }
    }

    @Test func grantsOverAMeasuredIntervalStayWithinTheRate() async throws {
        try await withRedis { client async throws in
            let limiter = RateLimiter(client: client)
            let rate = 200.0
            let burst = 20
            let start = try await client.serverMicroseconds()
            var granted = 0
            var requested = 0
            for _ in 0..<400 {
                granted += try await limiter.acquire(app: app, ratePerSecond: rate, burst: burst, requested: 3).granted
                requested += 3
            }
            let elapsed = Double(try await client.serverMicroseconds() - start) / 1_000_000
            #expect(Double(granted) <= Double(burst) + rate * elapsed + 1, "granted \(granted) in \(elapsed) s")
            #expect(granted >= burst)
            #expect(granted < requested || Double(requested) <= Double(burst) + rate * elapsed + 1)
        }
    }

    @Test func twoConcurrentAcquirersNeverExceedTheRateTogether() async throws {
        try await TestRedis.with(clients: 2) { clients async throws in
            let rate = 100.0
            let burst = 10
            let start = try await clients[0].serverMicroseconds()
            let totals = try await withThrowingTaskGroup(of: Int.self) { group in
                for client in clients {
                    group.addTask {
                        let limiter = RateLimiter(client: client)
                        var granted = 0
                        for _ in 0..<250 {
                            granted += try await limiter.acquire(app: app, scope: "job:1", ratePerSecond: rate, burst: burst, requested: 2).granted
                        }
                        return granted
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            let elapsed = Double(try await clients[0].serverMicroseconds() - start) / 1_000_000
            let total = totals.reduce(0, +)
            #expect(Double(total) <= Double(burst) + rate * elapsed + 1, "granted \(totals) in \(elapsed) s")
            #expect(total >= burst)
            for client in clients {
                await client.shutdown()
            }
        }
    }

    @Test func appsAndScopesHaveSeparateBuckets() async throws {
        try await withRedis { client async throws in
            let limiter = RateLimiter(client: client)
            let rate = 0.01
            #expect(try await limiter.acquire(app: app, ratePerSecond: rate, burst: 3, requested: 3).granted == 3)
            #expect(try await limiter.acquire(app: app, ratePerSecond: rate, burst: 3, requested: 1).granted == 0)
            #expect(try await limiter.acquire(app: app, scope: "app", ratePerSecond: rate, burst: 3, requested: 1).granted == 0)
            #expect(try await limiter.acquire(app: app, scope: "job:7", ratePerSecond: rate, burst: 3, requested: 3).granted == 3)
            #expect(try await limiter.acquire(app: "other", ratePerSecond: rate, burst: 3, requested: 3).granted == 3)
            #expect(try await client.send("EXISTS", .string("pf:{\(app):rate}:job:7")).int == 1)
        }
    }

    @Test func aLowerBurstCapsAFullBucket() async throws {
        try await withRedis { client async throws in
            let limiter = RateLimiter(client: client)
            #expect(try await limiter.acquire(app: app, ratePerSecond: 0.01, burst: 10, requested: 1).granted == 1)
            // Nine left, but the bucket now holds at most 4.
            #expect(try await limiter.acquire(app: app, ratePerSecond: 0.01, burst: 4, requested: 10).granted == 4)
        }
    }

    @Test func invalidArgumentsNameTheirField() async throws {
        try await withRedis { client async throws in
            let limiter = RateLimiter(client: client)
            for rate in [0, -1, Double.nan, Double.infinity] {
                #expect(
                    await registryError { try await limiter.acquire(app: app, ratePerSecond: rate, burst: 1, requested: 1) }?.field == "ratePerSecond"
                )
            }
            #expect(await registryError { try await limiter.acquire(app: app, ratePerSecond: 1, burst: 0, requested: 1) }?.field == "burst")
            #expect(await registryError { try await limiter.acquire(app: app, ratePerSecond: 1, burst: 1, requested: 0) }?.field == "requested")
            #expect(
                await registryError { try await limiter.acquire(app: app, scope: "", ratePerSecond: 1, burst: 1, requested: 1) }?.field == "scope")
            #expect(await registryError { try await limiter.acquire(app: "a{b}", ratePerSecond: 1, burst: 1, requested: 1) }?.field == "app")
            #expect(try await client.keyCount() == 0)
        }
    }
}
