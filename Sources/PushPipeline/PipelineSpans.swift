import APNs
import Kafka
import PushJobs
import Synchronization
import Tracing

/// The spans of the stages: one per message handled (job, shard task, chunk, feedback event, each
/// a child of the trace context its message carries) and one per APNs batch, never one per
/// notification. With tracing off they are no-op spans: no clock read, no allocation beyond the
/// closure.
enum PipelineSpans {
    /// Runs `body` in a consumer span named `name`, the child of the context `message` carries.
    static func consuming<T>(
        _ name: String, _ message: KafkaConsumerMessage, isolation: isolated (any Actor)? = #isolation,
        _ body: (any Span) async throws -> T
    ) async rethrows -> T {
        try await withSpan(name, context: TraceContext.extract(from: message), ofKind: .consumer, isolation: isolation) { span in
            if span.isRecording {
                span.attributes["messaging.system"] = "kafka"
                span.attributes["messaging.destination.name"] = message.topic
                span.attributes["messaging.kafka.partition"] = Int(message.partition)
                span.attributes["messaging.kafka.offset"] = Int(message.offset)
            }
            return try await body(span)
        }
    }
}

/// APNs's answers to one batch by HTTP status (`0`: no answer, the request failed), for the
/// batch's span: `apns.status.200`, `apns.status.410`, ….
final class APNsStatusTally: Sendable {
    private let counts = Mutex<[Int: Int]>([:])

    func add(_ result: Result<APNsResponse, APNsError>) {
        let status: Int
        switch result {
        case .success(let response): status = response.status
        case .failure: status = 0
        }
        counts.withLock { $0[status, default: 0] += 1 }
    }

    /// Sets `apns.status.<status>` on `span` for every status seen.
    func record(on span: any Span) {
        for (status, count) in counts.withLock({ $0 }) {
            span.attributes["apns.status.\(status)"] = count
        }
    }
}
