import Kafka
import PushCore
import PushStore
import Redis

/// Whether the process can work: Kafka answers a metadata request for `push.jobs` and Redis
/// answers PING, each within 2 seconds. `/readyz` of the API and of every worker. It also shows
/// when the apps' client certificates expire (an expiring or expired one does not make the
/// process unready: the other apps still send).
struct ReadinessProbe: Sendable {
    let redis: any RedisCommands
    let admin: KafkaAdmin
    /// `nil` in a process that holds no credentials (the API): no `certificates` then.
    let certificates: [CertificateExpiry]?
    let clock: @Sendable () -> Int64

    init(
        redis: any RedisCommands, admin: KafkaAdmin, certificates: [CertificateExpiry]? = nil,
        clock: @escaping @Sendable () -> Int64 = StoreClock.system
    ) {
        self.redis = redis
        self.admin = admin
        self.certificates = certificates
        self.clock = clock
    }

    /// `{"status": "ready"|"unavailable", "checks": {"kafka": "ok"|"unavailable: …", "redis": …},
    /// "certificates": [{"app", "environment", "not-valid-after", "days-left", "state"}]}`
    /// (`certificates` from the workers, which hold the credentials).
    func check() async -> (ready: Bool, body: JSONValue) {
        let checks = await dependencies()
        let ready = checks.values.allSatisfy { $0 == "ok" }
        var object = JSONObject()
        for name in checks.keys.sorted() {
            object[name] = .string(checks[name] ?? "")
        }
        var body: JSONObject = ["status": .string(ready ? "ready" : "unavailable"), "checks": .object(object)]
        if let certificates {
            let now = clock()
            body["certificates"] = .array(certificates.map { $0.jsonValue(now: now) })
        }
        return (ready, .object(body))
    }

    /// Each dependency's answer: `kafka` and `redis`, `"ok"` or `"unavailable: …"`, asked at once.
    func dependencies() async -> [String: String] {
        let admin = self.admin
        let redis = self.redis
        async let kafka = Self.outcome { _ = try await admin.describeTopic(PushTopic.jobs, timeout: .seconds(2)) }
        async let redisOutcome = Self.outcome { _ = try await redis.send("PING") }
        return ["kafka": await kafka, "redis": await redisOutcome]
    }

    /// `pushfleet_dependency_up{dependency}`: 1 when the dependency answered the probe at scrape
    /// time, 0 when it did not (`/metrics` of the API and of every worker; the alerts on an
    /// unreachable Redis or Kafka read it).
    static func dependencyUp(_ checks: [String: String]) -> String {
        var lines = [
            "# HELP pushfleet_dependency_up Whether the dependency (kafka, redis) answered this process at scrape time.",
            "# TYPE pushfleet_dependency_up gauge",
        ]
        for name in checks.keys.sorted() {
            lines.append(#"pushfleet_dependency_up{dependency="\#(name)"} \#(checks[name] == "ok" ? 1 : 0)"#)
        }
        return lines.joined(separator: "\n") + "\n"
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
