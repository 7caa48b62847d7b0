public import Kafka
public import Tracing

/// W3C trace context (`traceparent`, `tracestate`) in the headers of PushFleet's Kafka messages: a
/// campaign is one trace across `push.jobs`, its shard tasks, `push.deliveries`, `push.feedback`
/// and the dead letters. Written and read through the process's instrument (swift-distributed-
/// tracing): with no tracer bootstrapped (tracing off) nothing is written and reading is a no-op.
public enum TraceContext {
    /// `message` with the trace context of `context` (the task's current one by default) in its
    /// headers, replacing any it carried.
    public static func inject(into message: KafkaProducerMessage, from context: ServiceContext? = .current) -> KafkaProducerMessage {
        inject(into: [message], from: context)[0]
    }

    /// `messages`, each with the trace context of `context` (read once for them all).
    public static func inject(into messages: [KafkaProducerMessage], from context: ServiceContext? = .current) -> [KafkaProducerMessage] {
        guard let context, !messages.isEmpty else { return messages }
        var headers: [KafkaHeader] = []
        InstrumentationSystem.instrument.inject(context, into: &headers, using: KafkaHeaderInjector())
        guard !headers.isEmpty else { return messages }
        let names = Set(headers.map(\.name))
        return messages.map { message in
            var message = message
            message.headers.removeAll { names.contains($0.name) }
            message.headers += headers
            return message
        }
    }

    /// The trace context `message` carries (a top-level context when it carries none): the parent
    /// of the span that handles it.
    public static func extract(from message: KafkaConsumerMessage) -> ServiceContext {
        var context = ServiceContext.topLevel
        InstrumentationSystem.instrument.extract(message.headers, into: &context, using: KafkaHeaderExtractor())
        return context
    }
}

/// Writes trace context fields as Kafka headers (UTF-8 values).
struct KafkaHeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [KafkaHeader]) {
        carrier.append(KafkaHeader(name: key, value: Array(value.utf8)))
    }
}

/// Reads trace context fields from Kafka headers; header names compare case-insensitively.
struct KafkaHeaderExtractor: Extractor {
    func extract(key: String, from carrier: [KafkaHeader]) -> String? {
        carrier.first { $0.name.lowercased() == key.lowercased() }.map { String(decoding: $0.value, as: UTF8.self) }
    }
}
