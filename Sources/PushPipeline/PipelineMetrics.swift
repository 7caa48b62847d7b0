import APNs
import APNsCore
import CoreMetrics
import FlowControl
import Kafka
import Synchronization

/// The pipeline's series, through swift-metrics (a process serving `/metrics` bootstraps the
/// Prometheus factory; elsewhere they cost nothing). Labels are bounded: topic, app, outcome
/// class, APNs reason and event names — never a token or a job id.
final class PipelineMetrics: Sendable {
    private let outcomes = Mutex<[String: CoreMetrics.Counter]>([:])
    private let latencies = Mutex<[String: CoreMetrics.Timer]>([:])
    /// Gauges: resend depth by app, pool figures by label and environment.
    private let depths = Mutex<[String: CoreMetrics.Gauge]>([:])
    private let consumed = Mutex<[String: CoreMetrics.Counter]>([:])
    /// `pushfleet_notifications_in_flight`: handed to the APNs client, not answered yet.
    private let inFlight = CoreMetrics.Meter(label: "pushfleet_notifications_in_flight")
    private let assigned = Mutex<[String: CoreMetrics.Meter]>([:])
    private let rebalancing = Mutex<[String: CoreMetrics.Gauge]>([:])

    /// `count` notifications were handed to the APNs client.
    func sendStarted(_ count: Int = 1) {
        inFlight.increment(by: Double(count))
    }

    /// One answer came (or the send failed) after `duration`; `latency` is the app's timer
    /// (``apnsLatency(app:)``, looked up once per batch, not per notification).
    func sendFinished(after duration: Duration, latency: CoreMetrics.Timer) {
        inFlight.decrement()
        latency.recordNanoseconds(duration.nanoseconds)
    }

    /// `pushfleet_messages_consumed_total{topic}`: jobs, chunks, feedback events taken from Kafka.
    func consumed(topic: String) {
        cached(in: consumed, key: topic) {
            CoreMetrics.Counter(label: "pushfleet_messages_consumed_total", dimensions: [("topic", topic)])
        }.increment()
    }

    /// `pushfleet_kafka_assigned_partitions{group}`: the partitions this worker's member of the
    /// consumer group holds now. Across a fleet the values add up to the topic's partitions once
    /// the group is settled, each worker holding its share.
    func rebalanced(group: String, _ event: KafkaRebalanceEvent) {
        let meter = cached(in: assigned, key: group) {
            CoreMetrics.Meter(label: "pushfleet_kafka_assigned_partitions", dimensions: [("group", group)])
        }
        switch event {
        case .assigned(let partitions): meter.increment(by: Double(partitions.count))
        case .revoked(let partitions): meter.decrement(by: Double(partitions.count))
        }
    }

    /// `pushfleet_kafka_group_rebalancing{group}`: 1 while this worker's member of the consumer
    /// group takes part in a rebalance (joining, syncing, handing partitions over), 0 when it is
    /// steady; as of librdkafka's last statistics report (``WorkerGroups/groupStateInterval``).
    func groupState(group: String, _ state: KafkaGroupState) {
        cached(in: rebalancing, key: group) {
            CoreMetrics.Gauge(label: "pushfleet_kafka_group_rebalancing", dimensions: [("group", group)])
        }.record(state.isSteady ? 0 : 1)
    }

    /// `pushfleet_notifications_total{app, outcome, reason}`: final and retryable outcomes.
    func outcome(app: String, outcome: String, reason: String, count: Int = 1) {
        cached(in: outcomes, key: "\(app)\u{0}\(outcome)\u{0}\(reason)") {
            CoreMetrics.Counter(
                label: "pushfleet_notifications_total", dimensions: [("app", app), ("outcome", outcome), ("reason", reason)])
        }.increment(by: count)
    }

    /// `pushfleet_jobs_stopped_total{app, by, state}`: jobs this worker paused (the circuit
    /// breaker, or APNs refusing the whole request).
    func jobStopped(app: String, by actor: String, state: String) {
        cached(in: outcomes, key: "stopped\u{0}\(app)\u{0}\(actor)\u{0}\(state)") {
            CoreMetrics.Counter(label: "pushfleet_jobs_stopped_total", dimensions: [("app", app), ("by", actor), ("state", state)])
        }.increment()
    }

    /// `pushfleet_registry_changes_total{app, change}`: what the feedback worker did with the
    /// answers it was given: `removed`, `kept-aside`, `moved-environment`, `probed`, `unchanged`.
    func registryChange(app: String, change: String, count: Int = 1) {
        cached(in: outcomes, key: "registry\u{0}\(app)\u{0}\(change)") {
            CoreMetrics.Counter(label: "pushfleet_registry_changes_total", dimensions: [("app", app), ("change", change)])
        }.increment(by: count)
    }

    /// `pushfleet_apns_request_duration_seconds{app}`: from handing a notification to the APNs
    /// client to its result (waiting for a stream included).
    func apnsLatency(app: String) -> CoreMetrics.Timer {
        cached(in: latencies, key: app) {
            CoreMetrics.Timer(label: "pushfleet_apns_request_duration_seconds", dimensions: [("app", app)])
        }
    }

    /// `pushfleet_resend_buffer_depth{app}`: entries waiting in the app's resend buffer.
    func resendDepth(app: String, _ depth: Int) {
        cached(in: depths, key: app) {
            CoreMetrics.Gauge(label: "pushfleet_resend_buffer_depth", dimensions: [("app", app)])
        }.record(depth)
    }

    /// `pushfleet_apns_connections_open`, `pushfleet_apns_connections_target`,
    /// `pushfleet_apns_streams_in_flight`, `pushfleet_apns_stream_waiters` and
    /// `pushfleet_apns_round_trip_seconds` (once measured), per environment.
    func pool(_ statistics: APNsClient.PoolStatistics) {
        let environment = statistics.environment.rawValue
        gauge("pushfleet_apns_connections_open", environment).record(statistics.openConnections)
        gauge("pushfleet_apns_connections_target", environment).record(statistics.targetConnections)
        gauge("pushfleet_apns_streams_in_flight", environment).record(statistics.streamsInFlight)
        gauge("pushfleet_apns_stream_waiters", environment).record(statistics.waiters)
        if let roundTrip = statistics.roundTrip {
            gauge("pushfleet_apns_round_trip_seconds", environment).record(roundTrip / .seconds(1))
        }
    }

    private func gauge(_ label: String, _ environment: String) -> CoreMetrics.Gauge {
        cached(in: depths, key: label + "\u{0}" + environment) {
            CoreMetrics.Gauge(label: label, dimensions: [("environment", environment)])
        }
    }

    /// The metric of `store` under `key`, made by `make` the first time (the one lookup-or-create
    /// of every series here: swift-metrics handles are created once and reused).
    private func cached<Metric>(in store: borrowing Mutex<[String: Metric]>, key: String, make: () -> Metric) -> Metric {
        store.withLock { metrics in
            if let metric = metrics[key] { return metric }
            let metric = make()
            metrics[key] = metric
            return metric
        }
    }
}
