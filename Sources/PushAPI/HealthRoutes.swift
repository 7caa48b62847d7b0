import Hummingbird
import PushCore
import PushJobs

/// `/healthz` (the process answers), `/readyz` (Kafka and Redis answer), `/metrics`.
enum HealthRoutes {
    static let routes: [APIRoute] = [
        APIRoute(.get, "/healthz", "getHealth", { _ in APIResponse.json(["status": "ok"]) }),
        APIRoute(.get, "/readyz", "getReadiness", readiness),
        APIRoute(
            .get, "/metrics", "getMetrics",
            { call in
                let dependencies = await call.api.readiness.dependencies()
                return APIResponse.text(
                    call.api.metrics.exposition() + Array(ReadinessProbe.dependencyUp(dependencies).utf8), contentType: "text/plain; version=0.0.4")
            }),
    ]

    static func readiness(_ call: inout APICall) async throws -> Response {
        let (ready, body) = await call.api.readiness.check()
        return APIResponse.json(body, status: ready ? .ok : .serviceUnavailable)
    }
}
