import APNs
import FlowControl
import Kafka
import PushStore
import Redis

/// When a stage tries a Kafka or Redis operation again: a rule in a value type, carried out by
/// ``Retrying``.
///
/// - An error that says trying again can help (`isRetryable` of `KafkaError`,
///   `RedisClientError`, `APNsError`, `StoreError`: a server away, a timeout, a full
///   queue, `LOADING`, `TRYAGAIN`…) is retried for as long as it lasts, with jittered
///   exponential backoff (100 ms doubling to 5 s): a worker that loses its servers waits and
///   loses nothing.
/// - Any other error (a script error, `WRONGTYPE`, a message too large, an argument refused, an
///   error of unknown kind) gets ``attemptsForOtherErrors`` attempts in all, then it is thrown:
///   the stage dead-letters the message it was processing, with the error, and goes on.
/// - Cancellation is never retried, nor a stage's own decision to stop (the job was cancelled
///   or paused).
package struct RetryRule: Sendable {
    /// Attempts in all for an error that is not known to be transient. Default 3.
    package var attemptsForOtherErrors = 3
    /// 100 ms doubling to 5 s, each wait spread over ±20%.
    package var backoff = ExponentialBackoff(base: .milliseconds(100), maximum: .seconds(5), jitter: 0.2)

    package enum Decision: Equatable, Sendable {
        /// Try again after this delay.
        case retry(after: Duration)
        /// Stop and throw the error.
        case giveUp
    }

    /// What to do after the `failures`-th failure (1-based) with `error`; `random` in 0...1
    /// picks the jitter.
    package func decision(after error: any Error, failures: Int, random: Double) -> Decision {
        if error is CancellationError { return .giveUp }
        if !Self.isTransient(error) && failures >= attemptsForOtherErrors { return .giveUp }
        return .retry(after: backoff.delay(attempt: failures, random: random))
    }

    /// Whether the error says that the same operation may succeed later.
    package static func isTransient(_ error: any Error) -> Bool {
        switch error {
        case let error as KafkaError: error.isRetryable
        case let error as RedisClientError: error.isRetryable
        case let error as APNsError: error.isRetryable
        case let error as StoreError: error.isRetryable
        default: false
        }
    }
}
