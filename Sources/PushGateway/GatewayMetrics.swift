import CoreMetrics

/// The gateway's metrics (docs/online.md lists them). Labels are bounded: close reasons are a
/// closed set, apps are the configured ones.
enum GatewayMetrics {
    static let connections = Gauge(label: "pushfleet_gateway_connections")
    static let presenceWrites = Counter(label: "pushfleet_gateway_presence_writes_total")
    static let presenceFailures = Counter(label: "pushfleet_gateway_presence_failures_total")
    /// Acks of sends already settled (after the ack timeout or twice) or never written there.
    static let lateAcks = Counter(label: "pushfleet_gateway_late_acks_total")
    /// Time from writing a send to its ack.
    static let ackDuration = CoreMetrics.Timer(label: "pushfleet_gateway_ack_duration_seconds")
    /// `push.online` messages no gateway can read (their sends fall back to APNs).
    static let unreadableMessages = Counter(label: "pushfleet_gateway_unreadable_messages_total")
    /// `push.online` messages that arrived later than the ack timeout (left to their fallback).
    static let staleMessages = Counter(label: "pushfleet_gateway_stale_messages_total")
    /// `push.online` messages for other gateways, skipped.
    static let othersMessages = Counter(label: "pushfleet_gateway_other_gateways_messages_total")

    /// Inbox messages written to a connecting device (each a `push` frame with `replay`).
    static let replayed = Counter(label: "pushfleet_gateway_inbox_replayed_total")
    /// Inbox messages removed unsent: their job's payload is gone, or the job was cancelled.
    static let inboxDropped = Counter(label: "pushfleet_gateway_inbox_dropped_total")

    static func acknowledged(after latency: Duration) {
        ackDuration.recordNanoseconds(Int64(latency.components.seconds) * 1_000_000_000 + latency.components.attoseconds / 1_000_000_000)
    }

    /// Online sends by outcome: `acked`, or the fallback's reason (``OnlineDeliveryPlan/Fallback``).
    static func sends(_ count: Int, outcome: String) {
        guard count > 0 else { return }
        Counter(label: "pushfleet_gateway_online_sends_total", dimensions: [("outcome", outcome)]).increment(by: count)
    }

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
