import Logging
import PushCore
import PushStore

/// Runs an operation against Kafka or Redis until it succeeds: a worker that loses its
/// servers waits with jittered exponential backoff (100 ms doubling to 5 s), says so in its log,
/// and neither spins nor drops the work. Cancellation ends the wait.
enum Retrying {
    static func run<Value: Sendable>(
        _ what: @autoclosure () -> String,
        logger: Logger,
        operation: () async throws -> Value
    ) async throws -> Value {
        var delay = Duration.milliseconds(100)
        var failures = 0
        while true {
            do {
                let value = try await operation()
                if failures > 0 {
                    logger.notice("\(what()) succeeded after \(failures) failed attempt(s)")
                }
                return value
            } catch let error where isPermanent(error) {
                throw error
            } catch {
                failures += 1
                logger.warning("\(what()) failed, retrying in \(delay)", metadata: ["error": "\(error)", "attempt": "\(failures)"])
                try Task.checkCancellation()
                let jittered = delay * Double.random(in: 0.8...1.2)
                try await Task.sleep(for: jittered)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    /// Errors that say the request itself is wrong: retrying cannot help.
    private static func isPermanent(_ error: any Error) -> Bool {
        error is CancellationError || error is DeviceRegistryError || error is PushJobValidationError
    }
}
