import APNsCore
import NIOCore

/// The sends of one notification so far, and the rule for what follows an outcome: answer the
/// caller, send again at once (a refused stream, which APNs never processed), send again after
/// a backoff (a retryable answer or a lost connection, while attempts remain), or send again
/// with a new provider token (403 ExpiredProviderToken, once).
///
/// A retryable answer's `Retry-After` makes the backoff at least that long. One longer than
/// ``longestWait`` ends the sends with that answer: the caller keeps the notification for later
/// (the pipeline's resend buffer, which honours the wait) rather than holding it here.
///
/// ``APNsClient`` applies it to every outcome, in its one-by-one path and its batch path alike.
struct APNsAttempts {
    /// What one send came to.
    enum Outcome {
        /// The stream ended (answered, refused, lost or timed out).
        case stream(APNsStreamOutcome)
        /// No stream could be leased for it (no free stream in time, or no connection).
        case noStream(APNsError)
    }

    /// What to do next.
    enum Next {
        /// The caller gets this.
        case done(Result<APNsResponse, APNsError>)
        /// Send again now (the stream was refused; it does not count as an attempt).
        case sendAgain
        /// Send again after the backoff for this attempt, and not before `atLeast` (APNs's
        /// `Retry-After`) when given.
        case backOff(attempt: Int, atLeast: Duration?)
        /// Send again with a new provider token; when none can be had, do `otherwise`.
        indirect case renewProviderToken(otherwise: Next)
    }

    /// The longest wait between two sends of one notification: the backoff's cap, and the
    /// longest `Retry-After` waited out here.
    static let longestWait: Duration = .seconds(5)

    let maxAttempts: Int
    let maxRefusals: Int
    /// Sends that reached APNs or failed on the way (refused streams excluded).
    private(set) var attempts = 0
    private(set) var refusals = 0
    private var renewedProviderToken = false

    init(maxAttempts: Int, maxRefusals: Int) {
        self.maxAttempts = max(1, maxAttempts)
        self.maxRefusals = maxRefusals
    }

    /// Counts `outcome` and says what follows. `usesProviderToken`: the request carried a
    /// provider token that a new one could replace.
    mutating func next(after outcome: Outcome, usesProviderToken: Bool) -> Next {
        switch outcome {
        case .noStream(let error):
            guard error.code == .timeout || error.code == .connectFailed else { return .done(.failure(error)) }
            attempts += 1
            return attempts < maxAttempts ? .backOff(attempt: attempts, atLeast: nil) : .done(.failure(error))
        case .stream(.refused):
            refusals += 1
            return refusals <= maxRefusals ? .sendAgain : .done(.failure(APNsError(.refused)))
        case .stream(.response(let status, let headers, let body)):
            attempts += 1
            let response = APNsClient.response(status: status, headers: headers, body: body, attempts: attempts)
            let afterAnswer: Next =
                response.responseClass == .retryable && attempts < maxAttempts && (response.retryAfter ?? .zero) <= Self.longestWait
                ? .backOff(attempt: attempts, atLeast: response.retryAfter) : .done(.success(response))
            if response.reason == .expiredProviderToken, usesProviderToken, !renewedProviderToken {
                renewedProviderToken = true
                return .renewProviderToken(otherwise: afterAnswer)
            }
            return afterAnswer
        case .stream(.connectionLost(let error)):
            attempts += 1
            return attempts < maxAttempts ? .backOff(attempt: attempts, atLeast: nil) : .done(.failure(APNsError(.connectionLost, underlying: error)))
        case .stream(.timedOut):
            attempts += 1
            return attempts < maxAttempts ? .backOff(attempt: attempts, atLeast: nil) : .done(.failure(APNsError(.timeout)))
        }
    }
}
