import Synchronization

/// What a batch's callbacks reported, by index: callbacks run on any thread.
final class CallbackResults<Value: Sendable>: Sendable {
    private let values = Mutex([Int: Value]())

    func update(_ change: (inout [Int: Value]) -> Void) { values.withLock { change(&$0) } }

    var all: [Int: Value] { values.withLock { $0 } }
}
