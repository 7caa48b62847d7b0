import Synchronization

/// The first sends of a batch of notifications (``APNsClient/send(_:onResult:)``): each
/// stream's outcome arrives here on its connection's event loop, without a promise, a future
/// or a task per notification. An outcome that
/// ``APNsAttempts`` calls final goes to the caller at once; one that calls for another send (a
/// refused stream, an expired provider token, a retry) goes to ``followUps``, which the
/// batch's task sends one by one. ``followUps`` ends once every first send has its outcome.
final class APNsBatch: Sendable {
    typealias FollowUp = (index: Int, outcome: APNsAttempts.Outcome)

    let followUps: AsyncStream<FollowUp>
    private let followUpInput: AsyncStream<FollowUp>.Continuation
    private let maxAttempts: Int
    private let maxRefusals: Int
    private let usesProviderToken: Bool
    private let onResult: @Sendable (Int, Result<APNsResponse, APNsError>) -> Void
    /// First sends without an outcome yet.
    private let pending: Atomic<Int>

    init(
        count: Int, maxAttempts: Int, maxRefusals: Int, usesProviderToken: Bool,
        onResult: @escaping @Sendable (Int, Result<APNsResponse, APNsError>) -> Void
    ) {
        (followUps, followUpInput) = AsyncStream.makeStream(of: FollowUp.self)
        self.maxAttempts = maxAttempts
        self.maxRefusals = maxRefusals
        self.usesProviderToken = usesProviderToken
        self.onResult = onResult
        self.pending = Atomic(count)
        if count == 0 { followUpInput.finish() }
    }

    /// The stream of request `index` ended with `outcome` (the connection gives the stream
    /// back to the pool).
    func streamEnded(index: Int, _ outcome: APNsStreamOutcome) {
        ended(index, .stream(outcome))
    }

    /// Request `index` got no stream: the lease failed with `error`.
    func noStream(index: Int, _ error: APNsError) {
        ended(index, .noStream(error))
    }

    private func ended(_ index: Int, _ outcome: APNsAttempts.Outcome) {
        var attempts = APNsAttempts(maxAttempts: maxAttempts, maxRefusals: maxRefusals)
        if case .done(let result) = attempts.next(after: outcome, usesProviderToken: usesProviderToken) {
            onResult(index, result)
        } else {
            followUpInput.yield((index, outcome))
        }
        if pending.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            followUpInput.finish()
        }
    }
}
