import NIOCore
import Synchronization

/// The online sends a gateway waits to hear acknowledged, by connection and message id: the
/// delivery stage expects an ack before it writes a send to a connection, the connection's
/// handler reports the ack (or its end), and each `push.online` message waits on its own
/// ``Batch`` until every send of it is resolved or the ack timeout passes. An ack after that,
/// or for an id not expected on that connection, changes nothing (it is counted as late).
final class OnlineAcks: Sendable {
    /// What became of one send written to a connection.
    enum Resolution: Equatable, Sendable {
        /// The app acknowledged it.
        case acked
        /// Its connection ended first.
        case connectionLost
    }

    /// The sends of one `push.online` message, resolved one by one; ``wait(atMost:)`` returns
    /// once all are, or at the timeout, and from then on nothing changes them.
    final class Batch: Sendable {
        private struct State {
            var results: [Resolution?]
            var unresolved: Int
            var closed = false
            var waiter: CheckedContinuation<Void, Never>?
        }

        private let state: Mutex<State>

        /// A batch of `count` sends, of which `expected` are written to connections (the others
        /// are never resolved).
        init(count: Int, expected: Int) {
            state = Mutex(State(results: Array(repeating: nil, count: count), unresolved: expected))
        }

        /// Resolves send `index`; ignored once the batch is closed or the send resolved.
        /// Answers whether it counted.
        @discardableResult
        func resolve(_ index: Int, _ resolution: Resolution) -> Bool {
            let (counted, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                guard !state.closed, state.results.indices.contains(index), state.results[index] == nil else { return (false, nil) }
                state.results[index] = resolution
                state.unresolved -= 1
                guard state.unresolved == 0 else { return (true, nil) }
                state.closed = true
                defer { state.waiter = nil }
                return (true, state.waiter)
            }
            waiter?.resume()
            return counted
        }

        /// Waits until every expected send is resolved or `timeout` passed, then closes the
        /// batch and answers each send's resolution (`nil`: not resolved in time, or never
        /// written).
        func wait(atMost timeout: Duration) async -> [Resolution?] {
            let timer = Task { [weak self] in
                try? await Task.sleep(for: timeout)
                self?.close()
            }
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.closed || state.unresolved <= 0 {
                        state.closed = true
                        return true
                    }
                    state.waiter = waiter
                    return false
                }
                if now { waiter.resume() }
            }
            timer.cancel()
            return state.withLock { state in
                state.closed = true
                return state.results
            }
        }

        private func close() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.closed = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }

    private struct Key: Hashable {
        var connection: UInt64
        var id: String
    }

    private struct Expected {
        var batch: Batch
        var index: Int
        var since: NIODeadline
    }

    private struct State {
        var expected: [Key: Expected] = [:]
        var byConnection: [UInt64: Set<String>] = [:]

        /// Stops expecting `key`; answers what was expected.
        @discardableResult
        mutating func remove(_ key: Key) -> Expected? {
            guard let expected = expected.removeValue(forKey: key) else { return nil }
            byConnection[key.connection]?.remove(key.id)
            if byConnection[key.connection]?.isEmpty == true { byConnection[key.connection] = nil }
            return expected
        }
    }

    private let state = Mutex(State())

    /// Expects an ack of message `id` on `connection`, for send `index` of `batch`.
    func expect(connection: UInt64, id: String, batch: Batch, index: Int) {
        state.withLock { state in
            state.expected[Key(connection: connection, id: id)] = Expected(batch: batch, index: index, since: .now())
            state.byConnection[connection, default: []].insert(id)
        }
    }

    /// The app acknowledged message `id` on `connection`: answers how long after its send, or
    /// `nil` when no such send waits (late, or never sent there).
    func acknowledge(connection: UInt64, id: String) -> Duration? {
        let found = state.withLock { $0.remove(Key(connection: connection, id: id)) }
        guard let found, found.batch.resolve(found.index, .acked) else { return nil }
        return .nanoseconds(Int64(NIODeadline.now().uptimeNanoseconds - found.since.uptimeNanoseconds))
    }

    /// `connection` ended: every send waiting on it is lost.
    func connectionEnded(_ connection: UInt64) {
        let lost = state.withLock { state -> [Expected] in
            guard let ids = state.byConnection.removeValue(forKey: connection) else { return [] }
            return ids.compactMap { state.expected.removeValue(forKey: Key(connection: connection, id: $0)) }
        }
        for expected in lost { expected.batch.resolve(expected.index, .connectionLost) }
    }

    /// Stops expecting the acks of sends `ids` on their connections (their batch is closed).
    func forget(_ sends: [(connection: UInt64, id: String)]) {
        state.withLock { state in
            for send in sends { state.remove(Key(connection: send.connection, id: send.id)) }
        }
    }

    /// Sends waiting for an ack.
    var waiting: Int {
        state.withLock { $0.expected.count }
    }
}
