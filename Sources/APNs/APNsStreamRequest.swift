import NIOCore

/// Where the outcome of one stream goes: the promise of a single request, or a slot of a batch
/// (``APNsBatch``), which takes its outcome without a promise or a future per notification.
enum APNsStreamRequest: Sendable {
    case promise(EventLoopPromise<APNsStreamOutcome>)
    case batch(APNsBatch, index: Int, connection: APNsConnection)

    /// Hands `outcome` over. Called once per request, on the connection's event loop.
    func answer(_ outcome: APNsStreamOutcome) {
        switch self {
        case .promise(let promise):
            promise.succeed(outcome)
        case .batch(let batch, let index, let connection):
            batch.streamEnded(index: index, outcome, on: connection)
        }
    }
}
