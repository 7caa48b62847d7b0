import Prometheus
import Synchronization

/// The API's Prometheus series, served on `/metrics`: requests by route and status, request
/// durations, jobs published by app. Labels are bounded: route patterns (never a token or a job
/// id), status codes and configured app ids.
final class APIMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    private let duration: DurationHistogram

    init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        duration = registry.makeDurationHistogram(
            name: "pushfleet_api_request_duration_seconds",
            buckets: [.milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(500), .seconds(2), .seconds(10)],
            help: "Time to answer an API request.")
    }

    func request(route: String, method: String, status: Int, duration elapsed: Duration) {
        registry.makeCounter(
            name: "pushfleet_api_requests_total",
            labels: [("route", route), ("method", method), ("status", String(status))],
            help: "API requests answered, by route pattern, method and status."
        ).increment()
        duration.record(elapsed)
    }

    func published(app: String, replayed: Bool) {
        registry.makeCounter(
            name: "pushfleet_api_jobs_total", labels: [("app", app), ("outcome", replayed ? "replayed" : "published")],
            help: "Jobs published to push.jobs through the API, and idempotent replays."
        ).increment()
    }

    func receipt(app: String, event: String) {
        registry.makeCounter(
            name: "pushfleet_api_receipts_total", labels: [("app", app), ("event", event)],
            help: "Device receipts received."
        ).increment()
    }

    /// The Prometheus text exposition.
    func exposition() -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }
}
