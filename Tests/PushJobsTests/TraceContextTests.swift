import Kafka
import Testing

@testable import PushJobs

/// W3C trace context in Kafka headers. The end-to-end trace of a campaign, with a real tracer and
/// an OTLP receiver, is Tests/observability/test_traces.py; these pin the carriers and that a
/// process without a tracer writes nothing.
@Suite("Trace context in Kafka headers")
struct TraceContextTests {
    @Test func headersCarryTheFieldsAsWritten() {
        var headers = [KafkaHeader(name: "shard", value: Array("3/16".utf8))]
        KafkaHeaderInjector().inject("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", forKey: "traceparent", into: &headers)
        #expect(headers.map(\.name) == ["shard", "traceparent"])
        #expect(KafkaHeaderExtractor().extract(key: "traceparent", from: headers) == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        // Header names compare case-insensitively, as HTTP's do.
        #expect(KafkaHeaderExtractor().extract(key: "TraceParent", from: headers) != nil)
        #expect(KafkaHeaderExtractor().extract(key: "tracestate", from: headers) == nil)
    }

    @Test func withoutATracerNothingIsWritten() {
        let message = KafkaProducerMessage(
            topic: "push.jobs", key: "job", value: Array("{}".utf8), headers: [KafkaHeader(name: "shard", value: [0x31])])
        let injected = TraceContext.inject(into: [message, message])
        #expect(injected.map(\.headers) == [message.headers, message.headers])
    }
}
