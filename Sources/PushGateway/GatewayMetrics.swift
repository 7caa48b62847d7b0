import CoreMetrics

/// The gateway's metrics (docs/online.md lists them). Labels are bounded: close reasons are a
/// closed set, apps are the configured ones.
enum GatewayMetrics {
    static let connections = Gauge(label: "pushfleet_gateway_connections")
    static let presenceWrites = Counter(label: "pushfleet_gateway_presence_writes_total")
    static let presenceFailures = Counter(label: "pushfleet_gateway_presence_failures_total")

    static func opened(app: String) {
        Counter(label: "pushfleet_gateway_connects_total", dimensions: [("app", app)]).increment()
    }

    static func closed(_ close: GatewayClose) {
        Counter(label: "pushfleet_gateway_closes_total", dimensions: [("reason", close.label)]).increment()
    }

    static func online(app: String, devices: Int) {
        Gauge(label: "pushfleet_gateway_online_devices", dimensions: [("app", app)]).record(devices)
    }
}
