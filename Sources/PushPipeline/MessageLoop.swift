import Kafka

/// Consumes a consumer's messages with up to `concurrency` handled at once, marking each
/// processed when its handler returns `true`. A handler returns `false` only when it could not
/// finish (the worker is stopping): the message stays uncommitted for the next owner, and the
/// consumer's close does not wait for it. Ends when the consumer closes. `consumed` hears of
/// each message as it arrives (a metric).
package enum MessageLoop {
    static func run(
        _ consumer: KafkaConsumer,
        concurrency: Int,
        metrics: PipelineMetrics,
        handler: @escaping @Sendable (KafkaConsumerMessage) async -> Bool
    ) async {
        await run(consumer, concurrency: concurrency, consumed: { metrics.consumed(topic: $0.topic) }, handler: handler)
    }

    package static func run(
        _ consumer: KafkaConsumer,
        concurrency: Int,
        consumed: @escaping @Sendable (KafkaConsumerMessage) -> Void,
        handler: @escaping @Sendable (KafkaConsumerMessage) async -> Bool
    ) async {
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for await message in consumer.messages {
                consumed(message)
                if running >= concurrency {
                    await group.next()
                    running -= 1
                }
                group.addTask {
                    if await handler(message) {
                        consumer.markProcessed(message)
                    } else {
                        consumer.markUnfinished(message)
                    }
                }
                running += 1
            }
        }
    }
}
