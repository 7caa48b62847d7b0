import Kafka
import PushCore
import Redis

/// Whether the process can work: Kafka answers a metadata request for `push.jobs` and Redis
/// answers PING, each within 2 seconds. `/readyz` of the API and of every worker.
struct ReadinessProbe: Sendable {
    let redis: any RedisCommands
    let admin: KafkaAdmin

    /// `{"status": "ready"|"unavailable", "checks": {"kafka": "ok"|"unavailable: …", "redis": …}}`
    func check() async -> (ready: Bool, body: JSONValue) {
        let admin = self.admin
        let redis = self.redis
        async let kafka = Self.outcome { _ = try await admin.describeTopic(PushTopic.jobs, timeout: .seconds(2)) }
        async let redisOutcome = Self.outcome { _ = try await redis.send("PING") }
        let checks = ["kafka": await kafka, "redis": await redisOutcome]
        let ready = checks.values.allSatisfy { $0 == "ok" }
        var object = JSONObject()
        for name in checks.keys.sorted() {
            object[name] = .string(checks[name] ?? "")
        }
        return (ready, ["status": .string(ready ? "ready" : "unavailable"), "checks": .object(object)])
    }

    private static func outcome(_ probe: @Sendable () async throws -> Void) async -> String {
        do {
            try await probe()
            return "ok"
        } catch {
            return "unavailable: \(error)"
        }
    }
}
