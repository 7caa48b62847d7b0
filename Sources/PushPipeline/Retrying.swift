import Logging

/// Runs an operation against Kafka or Redis as ``RetryRule`` says: transient failures are waited
/// out (the worker says so in its log, and neither spins nor drops the work), other failures
/// get a few attempts and are then thrown. Cancellation ends the wait.
package enum Retrying {
    package static let rule = RetryRule()

    package static func run<Value: Sendable>(
        _ what: @autoclosure () -> String,
        logger: Logger,
        rule: RetryRule = Retrying.rule,
        operation: () async throws -> Value
    ) async throws -> Value {
        var failures = 0
        while true {
            do {
                let value = try await operation()
                if failures > 0 {
                    logger.notice("\(what()) succeeded after \(failures) failed attempt(s)")
                }
                return value
            } catch {
                failures += 1
                guard case .retry(let delay) = rule.decision(after: error, failures: failures, random: Double.random(in: 0...1)) else {
                    if !(error is CancellationError) {
                        logger.warning("\(what()) failed; not retrying", metadata: ["error": "\(error)", "attempts": "\(failures)"])
                    }
                    throw error
                }
                logger.warning("\(what()) failed, retrying in \(delay)", metadata: ["error": "\(error)", "attempt": "\(failures)"])
                try Task.checkCancellation()
                try await Task.sleep(for: delay)
            }
        }
    }
}
