import APNs
import APNsCore
import FlowControl

/// What follows one attempt at a job's broadcast on a channel (a single request, not a
/// notification per device, so it never goes through the resend buffer):
///
/// - accepted: the job's one notification is `accepted`;
/// - a refusal that sending again cannot change (the channel is unknown, the payload or a
///   header is wrong, the credential refused): the notification fails with APNs's reason;
/// - a retryable answer (429, 500, 503) or no answer (a lost connection, a timeout): sent
///   again after a jittered backoff (1 s doubling to 30 s), or after APNs's `Retry-After` when
///   longer, for at most ``maxAttempts`` attempts in all, and never with a wait over
///   ``longestWait``; then it fails with the last reason.
///
/// Every attempt carries the same `apns-request-id`.
struct BroadcastRule: Sendable {
    /// Attempts in all. Default 8 (about 2 minutes of backoff).
    var maxAttempts = 8
    var backoff = ExponentialBackoff(base: .seconds(1), maximum: .seconds(30), jitter: 0.2)
    /// The longest wait between two attempts; a longer `Retry-After` fails the broadcast.
    var longestWait: Duration = .seconds(60)

    enum Decision: Equatable, Sendable {
        case accepted
        case failed(reason: String)
        case retry(after: Duration)
    }

    /// The decision after attempt `attempt` (1-based) came to `outcome`; `random` in 0...1
    /// picks the jitter.
    func decision(after outcome: Result<APNsResponse, APNsError>, attempt: Int, random: Double) -> Decision {
        let reason: String
        var atLeast: Duration = .zero
        switch outcome {
        case .success(let response):
            if response.isSuccess { return .accepted }
            reason = response.reason?.rawValue ?? "status-\(response.status)"
            guard response.responseClass.isRetryable else { return .failed(reason: reason) }
            atLeast = response.retryAfter ?? .zero
        case .failure(let error):
            reason = "apns-\(error.code)"
            guard error.isRetryable else { return .failed(reason: reason) }
        }
        guard attempt < maxAttempts else { return .failed(reason: reason) }
        let wait = max(backoff.delay(attempt: attempt, random: random), atLeast)
        return wait <= longestWait ? .retry(after: wait) : .failed(reason: reason)
    }
}
