import NIOCore

/// Where the outcome of one stream goes: the promise of a single request, or a slot of a batch
/// (``APNsBatch``), which takes its outcome without a promise or a future per notification.
/// The stream itself goes back to the pool through the connection's events
/// (``APNsConnectionHandler/Events/streamsEnded``).
enum APNsStreamRequest: Sendable {
    case promise(EventLoopPromise<APNsStreamOutcome>)
    case batch(APNsBatch, index: Int)

    /// Hands `outcome` over. Called once per request, on the connection's event loop.
    func answer(_ outcome: APNsStreamOutcome) {
        switch self {
        case .promise(let promise):
            promise.succeed(outcome)
        case .batch(let batch, let index):
            batch.streamEnded(index: index, outcome)
        }
    }
}
