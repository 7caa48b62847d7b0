import CRdKafka
import FlowControl

/// Serves a producer's delivery reports, which librdkafka hands out in batches as events on the
/// main queue: one wake-up and one window release per batch instead of per message.
///
/// `@unchecked Sendable`: the queue handle is used by the producer's poll thread only and
/// destroyed before the client.
final class DeliveryReportQueue: @unchecked Sendable {
    private let client: RDKafkaClient
    private let queue: OpaquePointer
    private let window: AsyncPermits
    /// Messages taken from an event at a time.
    private static let chunk = 1_024

    init(client: RDKafkaClient, window: AsyncPermits) {
        self.client = client
        self.queue = rd_kafka_queue_get_main(client.pointer)
        self.window = window
    }

    deinit {
        rd_kafka_queue_destroy(queue)
    }

    /// Waits up to `milliseconds` for an event and completes the sends it reports on.
    func serve(waitingUpTo milliseconds: Int32) {
        guard let event = rd_kafka_queue_poll(queue, milliseconds) else { return }
        var reported = 0
        if rd_kafka_event_type(event) == RD_KAFKA_EVENT_DR {
            withUnsafeTemporaryAllocation(of: UnsafePointer<rd_kafka_message_t>?.self, capacity: Self.chunk) { messages in
                while true {
                    let count = rd_kafka_event_message_array(event, messages.baseAddress, Self.chunk)
                    guard count > 0 else { break }
                    complete(messages.prefix(count))
                    reported += count
                }
            }
        }
        // librdkafka frees the messages' places in `queue.buffering.max.messages` when the event
        // is destroyed. Permits handed back before that let a sender enqueue into a queue that
        // is still full (Local: Queue full).
        rd_kafka_event_destroy(event)
        if reported > 0 { window.release(reported) }
    }

    /// Completes reports in runs of the same batch, so each batch is locked once per run.
    private func complete(_ messages: UnsafeMutableBufferPointer<UnsafePointer<rd_kafka_message_t>?>.SubSequence) {
        var run: [DeliveryBatch.Outcome] = []
        run.reserveCapacity(messages.count)
        var runBatch: DeliveryBatch?
        for message in messages {
            guard let message, let opaque = message.pointee._private else { continue }
            let slot = opaque.assumingMemoryBound(to: DeliveryBatch.Slot.self).pointee
            let batch = slot.batch.takeUnretainedValue()
            if let current = runBatch, current !== batch {
                current.complete(run)
                run.removeAll(keepingCapacity: true)
            }
            runBatch = batch
            run.append(
                DeliveryBatch.Outcome(
                    index: slot.index, partition: message.pointee.partition, offset: message.pointee.offset,
                    error: message.pointee.err))
        }
        if let runBatch { runBatch.complete(run) }
    }
}
