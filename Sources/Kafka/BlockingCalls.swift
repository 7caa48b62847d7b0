import Dispatch
import FlowControl

/// Where blocking librdkafka calls run when no dedicated thread owns them: a dispatch queue, away
/// from Swift's cooperative pool.
///
/// The awaiting task stops waiting as soon as it is cancelled (``BlockingCall``): a worker
/// stopping at its deadline never waits on librdkafka. The call itself cannot be interrupted;
/// it finishes on the queue, and its closure keeps the handles it captured alive until then.
enum BlockingCalls {
    private static let queue = DispatchQueue(label: "pushfleet.kafka.blocking", attributes: .concurrent)

    /// The call's result; `CancellationError` when the caller was cancelled first.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws(KafkaError) -> T) async throws -> T {
        try await BlockingCall.run(on: queue) { _ in try body() }
    }

    /// The result of a call that cannot fail, or `nil` when the caller was cancelled first.
    static func runUnlessCancelled<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T? {
        try? await BlockingCall.run(on: queue) { _ in body() }
    }
}
