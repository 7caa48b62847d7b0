import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import LocalRedis
import PipelineTestSupport
import PushAPI
import PushConfiguration
import PushCore
import PushJobs
import PushStore
import Testing

/// Worker processes as operators run them: their health and metrics endpoints, and SIGTERM in
/// the middle of a campaign.
@Suite("Worker operations", .serialized)
struct WorkerOperationsTests {
    typealias Stack = PipelineStack

    @Test("a worker serves /healthz, /readyz and the pipeline's series on /metrics")
    func metricsAfterASmallCampaign() async throws {
        let tokens = (0..<500).map(Stack.token)
        let uninstalled = Array(tokens.prefix(5))
        try await Stack.with(simulator: { simulator in
            simulator.devices.unregistered = Dictionary(uniqueKeysWithValues: uninstalled.map { ($0.hex, 10_000) })
        }) { stack in
            try await stack.register(tokens)
            let port = try LocalRedisServer.freePort()
            let worker = try WorkerProcess.start(stack: stack, environment: ["PUSHFLEET__METRICS__PORT": String(port)])
            defer { worker.forceStop() }
            let endpoints = PushAPIClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, apiKey: nil)
            _ = try await eventually("the worker's endpoints answer") {
                try? await endpoints.request("GET", "/healthz").status
            } until: {
                $0 == 200
            }
            let ready = try await endpoints.request("GET", "/readyz")
            #expect(ready.status == 200)
            #expect(ready.json?.objectValue?["status"]?.stringValue == "ready")

            try await stack.publish(Stack.job(id: "observed", audience: .broadcast))
            _ = try await eventually("the campaign completes") {
                try await stack.report("observed")
            } until: {
                $0.isComplete
            }
            _ = try await eventually("the feedback worker removed the uninstalled devices") {
                try await stack.registry.deviceCount(app: Stack.app).sandbox
            } until: {
                $0 == tokens.count - uninstalled.count
            }

            func value(_ series: String, in text: String) -> Double? {
                text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
            }
            // The feedback worker counts a removal once the registry has changed: the device
            // count above can drop a moment before the counter moves.
            let text = try await eventually("the worker counted the removals") {
                String(decoding: try await endpoints.request("GET", "/metrics").body, as: UTF8.self)
            } until: {
                value(#"pushfleet_worker_events_total{event="feedback-removed"}"#, in: $0) == Double(uninstalled.count)
            }
            func value(_ series: String) -> Double? { value(series, in: text) }
            #expect(value(#"pushfleet_notifications_total{app="news",outcome="accepted",reason="Success"}"#) == 495, "\(text)")
            #expect(value(#"pushfleet_notifications_total{app="news",outcome="unregistered",reason="Unregistered"}"#) == 5)
            #expect(value(#"pushfleet_messages_consumed_total{topic="push.jobs"}"#) == Double(1 + stack.configuration.registry.shards))
            #expect((value(#"pushfleet_messages_consumed_total{topic="push.deliveries"}"#) ?? 0) >= 1)
            #expect(value(#"pushfleet_messages_consumed_total{topic="push.feedback"}"#) == 5)
            #expect(value(#"pushfleet_worker_events_total{event="feedback-removed"}"#) == 5)
            #expect(value(#"pushfleet_worker_events_total{event="accepted"}"#) == 495)
            #expect(value(#"pushfleet_apns_request_duration_seconds_count{app="news"}"#) == 500)
            #expect(value(#"pushfleet_resend_buffer_depth{app="news"}"#) == 0)
            #expect(value("pushfleet_notifications_in_flight") == 0)
            #expect(value(#"pushfleet_dependency_up{dependency="kafka"}"#) == 1, "\(text)")
            #expect(value(#"pushfleet_dependency_up{dependency="redis"}"#) == 1)
            // The process's start, within the test's own run.
            let started = try #require(value("process_start_time_seconds"), "\(text)")
            #expect(abs(started - Date().timeIntervalSince1970) < 600)
            // The only worker holds every partition of its three groups.
            let options = EmbeddedStack.Options()
            #expect(value(#"pushfleet_kafka_assigned_partitions{group="pushfleet.expand"}"#) == Double(options.jobPartitions))
            #expect(value(#"pushfleet_kafka_assigned_partitions{group="pushfleet.send"}"#) == Double(options.deliveryPartitions))
            #expect(value(#"pushfleet_kafka_assigned_partitions{group="pushfleet.feedback"}"#) == Double(EmbeddedStack.feedbackPartitions))
            #expect(text.contains(#"pushfleet_consumer_lag{group="pushfleet.send",topic="push.deliveries",partition="0"}"#))
            // Offsets are committed every 500 ms and the pool gauges sampled every 2 s.
            _ = try await eventually("lag 0 on every partition, the pool's connections counted and every group steady") {
                String(decoding: try await endpoints.request("GET", "/metrics").body, as: UTF8.self)
            } until: { latest in
                let lags = latest.split(separator: "\n").filter { $0.hasPrefix("pushfleet_consumer_lag{") }
                func gauge(_ name: String) -> Double? {
                    latest.split(separator: "\n").first { $0.hasPrefix(name + #"{environment="sandbox"}"#) }
                        .flatMap { Double($0.split(separator: " ").last ?? "") }
                }
                // The pool sizes itself: at least one connection, at most the configured cap,
                // and the round trip it measured.
                let open = gauge("pushfleet_apns_connections_open") ?? 0
                let target = gauge("pushfleet_apns_connections_target") ?? 0
                // push.jobs, push.deliveries and push.feedback.
                return lags.count == Int(options.jobPartitions + options.deliveryPartitions) + EmbeddedStack.feedbackPartitions
                    && lags.allSatisfy { $0.hasSuffix(" 0") }
                    && open >= 1 && open <= Double(stack.configuration.apns.connectionsPerPool)
                    && target >= open
                    && (gauge("pushfleet_apns_round_trip_seconds") ?? 0) > 0
                    // Its member of each group reports, from librdkafka's statistics, that it
                    // takes part in no rebalance.
                    && WorkerMetricsText.groupView(Array(latest.utf8)).rebalancing
                        == ["pushfleet.expand": false, "pushfleet.send": false, "pushfleet.feedback": false]
            }
            #expect(!text.contains(tokens[0].hex), "labels never carry a token")
            #expect(!text.contains("observed"), "labels never carry a job id")
            try await worker.stopGracefully()
        }
    }

    @Test("SIGTERM mid-campaign: the worker exits 0 and the campaign completes on the other with no token missed")
    func sigtermDuringACampaign() async throws {
        let total = 20_000
        let tokens = (0..<total).map(Stack.token)
        try await Stack.with(simulator: { $0.latency = .uniform(.milliseconds(2), .milliseconds(6)) }) { stack in
            try await stack.register(tokens)
            let deadline = ["PUSHFLEET__WORKER__SHUTDOWN_DEADLINE_SECONDS": "20"]
            let first = try WorkerProcess.start(stack: stack, environment: deadline)
            let second = try WorkerProcess.start(stack: stack, environment: deadline)
            defer {
                first.forceStop()
                second.forceStop()
            }
            try await stack.publish(Stack.job(id: "campaign", audience: .broadcast))
            _ = try await eventually("the campaign to be under way") {
                try await stack.simulator.counters().accepted
            } until: {
                $0 >= total / 5
            }
            let stopping = ContinuousClock.now
            try await first.stopGracefully()
            let stoppedAfter = ContinuousClock.now - stopping
            #expect(stoppedAfter < .seconds(20), "within the shutdown deadline")

            let report = try await eventually("the campaign to finish", timeout: .seconds(300)) {
                try await stack.report("campaign")
            } until: {
                $0.isComplete
            }
            let seen = try await stack.simulator.counters()
            let (missed, sentTwice) = coverage(of: tokens, seen)
            print("worker SIGTERM: stopped in \(stoppedAfter); \(missed.count) tokens missed, \(sentTwice) sent twice")
            #expect(missed.isEmpty)
            #expect(report.accepted == total)
            // A graceful stop settles what it sent and hands back what it did not send; the next
            // owner of a chunk waits for the stopping worker's lease. Only a stop cut short
            // (sent, not yet settled) sends again, within the stopping worker's window:
            // chunks-in-flight (4) × 1,000.
            #expect(sentTwice <= 4 * 1_000)
            try await second.stopGracefully()
        }
    }
}
