import Dispatch

/// Where blocking librdkafka calls run when no dedicated thread owns them: a dispatch queue, away
/// from Swift's cooperative pool.
enum BlockingCalls {
    private static let queue = DispatchQueue(label: "pushfleet.kafka.blocking", attributes: .concurrent)

    static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws(KafkaError) -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                do throws(KafkaError) {
                    continuation.resume(returning: try body())
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
