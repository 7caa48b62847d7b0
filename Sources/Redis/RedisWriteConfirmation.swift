/// What the `WAIT` that ends a batch of writes on a cluster master says about them: the rule
/// ``RedisClusterClient`` follows before it returns the batch's answers.
///
/// A write a master holds alone is lost if the master fails over before replicating it (a
/// master cut off from its replicas by a partition keeps taking writes until it notices it is
/// in the minority; the replica promoted on the other side never saw them). So a batch counts
/// as done only when `WAIT` counts enough replicas, or when the node wrote nothing at all: a
/// node demoted to a replica answers every write with `MOVED` (followed by the caller like any
/// redirection) and refuses the `WAIT` itself.
enum RedisWriteConfirmation: Equatable, Sendable {
    /// Enough replicas have the batch's writes.
    case confirmed
    /// The node answered every write with an error: nothing was written there, nothing needs
    /// confirming; the errors go back to the caller.
    case nothingWritten
    /// The node ran writes that fewer than the required replicas confirmed (`replicas`: 0 when
    /// it refused the `WAIT`): they must not be acknowledged.
    case unconfirmed(replicas: Int)

    /// Judges a batch from its `WAIT`'s answer and the answers of its writes.
    static func judge(wait: RedisReply, writes: [RedisReply], required: Int) -> RedisWriteConfirmation {
        let wroteNothing = writes.allSatisfy { if case .error = $0 { true } else { false } }
        guard case .integer(let replicas) = wait else {
            return wroteNothing ? .nothingWritten : .unconfirmed(replicas: 0)
        }
        if replicas >= Int64(required) { return .confirmed }
        return wroteNothing ? .nothingWritten : .unconfirmed(replicas: Int(replicas))
    }
}
