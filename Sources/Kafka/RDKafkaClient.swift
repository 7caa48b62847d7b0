import CRdKafka
import Logging
import Synchronization

/// The one place a librdkafka handle (`rd_kafka_t *`) lives.
///
/// `@unchecked Sendable`: librdkafka documents its handle as thread-safe for every call this
/// module makes (produce, poll, commit, assign, metadata), and the callbacks object is immutable
/// once the handle exists. The handle is destroyed exactly once, in `deinit`, after which
/// librdkafka makes no further callbacks.
package final class RDKafkaClient: @unchecked Sendable {
    package enum Kind {
        case producer
        case consumer

        var cValue: rd_kafka_type_t {
            switch self {
            case .producer: RD_KAFKA_PRODUCER
            case .consumer: RD_KAFKA_CONSUMER
            }
        }
    }

    package let pointer: OpaquePointer
    let kind: Kind
    let callbacks: RDKafkaCallbacks
    /// Topic handles by name, created on first use: producing by handle spares librdkafka a
    /// topic lookup under its lock for every message.
    private let topics = Mutex<[String: TopicHandle]>([:])

    private struct TopicHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// Whether `deinit` destroys the handle (see ``keepHandleAtDeinit(_:)``).
    private let destroysHandle = Atomic<Bool>(true)

    /// Creates a handle. librdkafka takes ownership of the configuration on success.
    package init(kind: Kind, properties: KafkaConfigurationProperties, callbacks: RDKafkaCallbacks) throws(KafkaError) {
        let conf = try properties.makeRDKafkaConf()
        rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(callbacks).toOpaque())
        rd_kafka_conf_set_log_cb(conf) { handle, level, facility, text in
            guard let handle, let opaque = rd_kafka_opaque(handle) else { return }
            let callbacks = Unmanaged<RDKafkaCallbacks>.fromOpaque(opaque).takeUnretainedValue()
            callbacks.log(level: level, facility: facility.map { String(cString: $0) } ?? "", text: text.map { String(cString: $0) } ?? "")
        }
        rd_kafka_conf_set_error_cb(conf) { handle, err, reason, opaque in
            guard let opaque else { return }
            let callbacks = Unmanaged<RDKafkaCallbacks>.fromOpaque(opaque).takeUnretainedValue()
            callbacks.logger.info(
                "librdkafka error",
                metadata: [
                    "kafka.error": "\(KafkaErrorCode(rawValue: err).name)",
                    "kafka.reason": "\(reason.map { String(cString: $0) } ?? "")",
                ])
        }
        if callbacks.deliveryReportsAsEvents {
            // Delivery reports arrive in batches on the main queue (`rd_kafka_queue_get_main`).
            rd_kafka_conf_set_events(conf, Int32(RD_KAFKA_EVENT_DR))
        }
        if callbacks.onRebalance != nil {
            rd_kafka_conf_set_rebalance_cb(conf) { handle, err, partitions, opaque in
                guard let handle, let partitions, let opaque else { return }
                Unmanaged<RDKafkaCallbacks>.fromOpaque(opaque).takeUnretainedValue()
                    .onRebalance?(handle, err, partitions)
            }
        }
        if callbacks.onStatistics != nil {
            // Served by the thread that polls (a consumer's poll thread); librdkafka frees the
            // report when the callback returns 0.
            rd_kafka_conf_set_stats_cb(conf) { handle, json, length, opaque in
                guard let json, let opaque else { return 0 }
                let report = UnsafeRawBufferPointer(start: json, count: length).bindMemory(to: UInt8.self)
                Unmanaged<RDKafkaCallbacks>.fromOpaque(opaque).takeUnretainedValue().onStatistics?(report)
                return 0
            }
        }

        var errorText = [CChar](repeating: 0, count: 512)
        guard let handle = rd_kafka_new(kind.cValue, conf, &errorText, errorText.count) else {
            rd_kafka_conf_destroy(conf)
            let reason = String(cBuffer: errorText)
            throw KafkaError(code: .clientCreation, message: reason)
        }
        self.pointer = handle
        self.kind = kind
        self.callbacks = callbacks
    }

    deinit {
        topics.withLock { topics in
            for handle in topics.values { rd_kafka_topic_destroy(handle.pointer) }
        }
        if destroysHandle.load(ordering: .acquiring) {
            // A consumer leaves its group in its own close (``KafkaConsumer/close()``), on a
            // thread of its own. Left to `rd_kafka_destroy`, that close would run here, on the
            // thread that dropped the last reference (often one of Swift's cooperative pool), and
            // wait for a rebalance callback no poll serves any more: for ever.
            rd_kafka_destroy_flags(pointer, kind == .consumer ? Int32(RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE) : 0)
        } else {
            // The handle's threads live on until the process exits and may still call back.
            _ = Unmanaged.passRetained(callbacks)
        }
    }

    /// While `keep` is true, `deinit` leaves the handle to the process's exit instead of
    /// destroying it: for a handle whose destruction would abort the process (see
    /// ``KafkaConsumer``'s cooperative-sticky guard).
    func keepHandleAtDeinit(_ keep: Bool) {
        destroysHandle.store(!keep, ordering: .releasing)
    }

    /// The linked librdkafka's version, `0xMMmmrrxx`.
    static var libraryVersion: Int32 { rd_kafka_version() }

    /// The handle of a topic, for producing; `nil` if librdkafka refuses the name.
    func topicHandle(named name: String) -> OpaquePointer? {
        topics.withLock { topics in
            if let handle = topics[name] { return handle.pointer }
            guard let handle = rd_kafka_topic_new(pointer, name, nil) else { return nil }
            topics[name] = TopicHandle(pointer: handle)
            return handle
        }
    }

    /// The name librdkafka gave this client, such as `rdkafka#producer-1`.
    var name: String { String(cString: rd_kafka_name(pointer)) }
}

/// Hooks librdkafka calls on its own threads. Set before the handle is created, never changed
/// after, hence `@unchecked Sendable`.
package final class RDKafkaCallbacks: @unchecked Sendable {
    let logger: Logger
    /// Producers: deliver reports as batched events instead of one callback per message.
    let deliveryReportsAsEvents: Bool
    let onRebalance: ((OpaquePointer, rd_kafka_resp_err_t, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) -> Void)?
    /// The statistics report (JSON), every `statistics.interval.ms`; valid during the call.
    let onStatistics: ((UnsafeBufferPointer<UInt8>) -> Void)?

    package init(
        logger: Logger,
        deliveryReportsAsEvents: Bool = false,
        onRebalance: (
            (OpaquePointer, rd_kafka_resp_err_t, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) -> Void
        )? = nil,
        onStatistics: ((UnsafeBufferPointer<UInt8>) -> Void)? = nil
    ) {
        self.logger = logger
        self.deliveryReportsAsEvents = deliveryReportsAsEvents
        self.onRebalance = onRebalance
        self.onStatistics = onStatistics
    }

    /// librdkafka speaks syslog levels. This is library code: nothing above info.
    func log(level: Int32, facility: String, text: String) {
        let swiftLevel: Logger.Level =
            switch level {
            case ...4: .info
            case 5...6: .debug
            default: .trace
            }
        logger.log(level: swiftLevel, "\(text)", metadata: ["kafka.facility": "\(facility)", "kafka.syslog": "\(level)"])
    }
}

extension String {
    /// Decodes a NUL-terminated C buffer that may be partially filled.
    init(cBuffer: [CChar]) {
        self = String(decoding: cBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The librdkafka this process loaded, which can be newer than the headers PushFleet was built
/// with (`LD_LIBRARY_PATH`).
public enum KafkaLibrary {
    /// Its version, e.g. `2.0.2`.
    public static var version: String { String(cString: rd_kafka_version_str()) }
}
