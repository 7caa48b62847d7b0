import Hummingbird
import Kafka
import PushCore
import Redis

/// `/healthz` (the process answers), `/readyz` (Kafka and Redis answer), `/metrics`.
enum HealthRoutes {
    static let routes: [APIRoute] = [
        APIRoute(.get, "/healthz", "getHealth", { _ in APIResponse.json(["status": "ok"]) }),
        APIRoute(.get, "/readyz", "getReadiness", readiness),
        APIRoute(.get, "/metrics", "getMetrics", { call in
            APIResponse.text(call.api.metrics.exposition(), contentType: "text/plain; version=0.0.4")
        }),
    ]

    static func readiness(_ call: inout APICall) async throws -> Response {
        let api = call.api
        async let kafka = check { _ = try await api.admin.describeTopic(PushTopic.jobs, timeout: .seconds(2)) }
        async let redis = check { _ = try await api.redis.send("PING") }
        let checks: [String: String] = ["kafka": await kafka, "redis": await redis]
        let ready = checks.values.allSatisfy { $0 == "ok" }
        var object = JSONObject()
        for name in checks.keys.sorted() {
            object[name] = .string(checks[name] ?? "")
        }
        return APIResponse.json(
            ["status": .string(ready ? "ready" : "unavailable"), "checks": .object(object)],
            status: ready ? .ok : .serviceUnavailable)
    }

    private static func check(_ probe: @Sendable () async throws -> Void) async -> String {
        do {
            try await probe()
            return "ok"
        } catch {
            return "unavailable: \(error)"
        }
    }
}
