import Kafka

/// Consumes a consumer's messages with up to `concurrency` handled at once, marking each
/// processed when its handler returns `true`. A handler returns `false` only when it could not
/// finish (the worker is stopping): the message stays uncommitted for the next owner, and the
/// consumer's close does not wait for it. Ends when the consumer closes.
enum MessageLoop {
    static func run(
        _ consumer: KafkaConsumer,
        concurrency: Int,
        metrics: PipelineMetrics,
        handler: @escaping @Sendable (KafkaConsumerMessage) async -> Bool
    ) async {
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for await message in consumer.messages {
                metrics.consumed(topic: message.topic)
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
