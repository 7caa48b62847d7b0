import APNs
import LocalRedis
import PushConfiguration
import PushCore
import PushStore
import Redis
import Testing

@testable import PushPipeline

@Suite("Send throttle: a job's rate nests inside its app's")
struct SendThrottleTests {
    static func app(rate: Double) -> PushApp {
        PushApp(
            settings: AppSettings(
                id: "news", bundleID: "com.example.news", auth: .token(teamID: "TEAM123456", keyID: "KEY1234567", keyFile: "k.p8"),
                ratePerSecond: rate),
            credential: .token(teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: ""))
    }

    @Test("the buckets a notification takes permits from")
    func buckets() {
        let both = SendThrottle.Policy(app: Self.app(rate: 100), jobID: "j", override: ThrottleOverride(ratePerSecond: 1_000))
        #expect(both.buckets.map(\.scope) == [nil, "job:j"], "the app's bucket always, the job's inside it")
        #expect(both.buckets.map(\.ratePerSecond) == [100, 1_000])
        let appOnly = SendThrottle.Policy(app: Self.app(rate: 100), jobID: "j", override: nil)
        #expect(appOnly.buckets.map(\.scope) == [nil])
        let jobOnly = SendThrottle.Policy(app: Self.app(rate: 0), jobID: "j", override: ThrottleOverride(ratePerSecond: 50))
        #expect(jobOnly.buckets.map(\.scope) == ["job:j"])
        #expect(SendThrottle.Policy(app: Self.app(rate: 0), jobID: "j", override: nil).buckets.isEmpty)
        let live = SendThrottle.Policy(app: Self.app(rate: 100), jobID: "j", override: ThrottleOverride(ratePerSecond: 1_000), operatorRate: 20)
        #expect(live.buckets.map(\.ratePerSecond) == [100, 20], "an operator's rate replaces the job's own")
    }

    @Test("a job faster than its app gets no more than the app's bucket holds (real redis-server)")
    func nested() async throws {
        try await LocalRedisServer.with { server async throws in
            let client = RedisClient(configuration: server.configuration)
            let counters = WorkerCounters()
            let throttle = SendThrottle(limiter: RateLimiter(client: client), permitBlock: 100, counters: counters)
            // The app allows 10/s (a full bucket holds 10); the job asks for 1,000/s. Before the
            // job's rate nested inside its app's, its own bucket replaced the app's: 100 (a
            // permit block) would have been admitted.
            let fast = SendThrottle.Policy(app: Self.app(rate: 10), jobID: "fast", override: ThrottleOverride(ratePerSecond: 1_000))
            #expect(try await throttle.admit(app: "news", policy: fast, requested: 500) == 10, "the app's full bucket, not the job's")
            // A job slower than its app gets its own bucket's worth.
            let slow = SendThrottle.Policy(app: Self.app(rate: 1_000), jobID: "slow", override: ThrottleOverride(ratePerSecond: 5))
            #expect(try await throttle.admit(app: "other", policy: slow, requested: 500) == 5)
            #expect(counters[.ratePermitWaits] == 0, "full buckets: nobody waited")
            await client.shutdown()
        }
    }
}
