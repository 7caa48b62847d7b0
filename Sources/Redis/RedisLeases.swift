import Synchronization

/// Leases handed out in arrival order, with the waiting done for the caller: a
/// ``RedisConnectionPoolStateMachine`` in a mutex, whose queued callers suspend (no thread is
/// blocked) and leave the queue at once when their task is cancelled.
///
/// ``RedisClient`` leases its connections through it, and a ``HiredisConnection`` its one
/// context (a pool of one: whoever holds the lease is the only user of the hiredis context).
final class RedisLeases<Lease: Sendable>: Sendable {
    private typealias Waiter = CheckedContinuation<Lease?, any Error>

    private struct State {
        var machine: RedisConnectionPoolStateMachine<Lease, Waiter>
        var nextWaiterID = 0
    }

    private let state: Mutex<State>
    private let shutDownError: @Sendable () -> RedisClientError

    /// At most `capacity` leases; `shutDownError` is what callers get after ``shutDown()``.
    init(capacity: Int, shutDownError: @escaping @Sendable () -> RedisClientError) {
        self.state = Mutex(State(machine: RedisConnectionPoolStateMachine(capacity: capacity)))
        self.shutDownError = shutDownError
    }

    /// Leases that exist (idle, held, or being created).
    var count: Int {
        state.withLock { $0.machine.connectionCount }
    }

    /// Callers waiting for a lease.
    var waiterCount: Int {
        state.withLock { $0.machine.waiterCount }
    }

    /// An idle lease, or `nil`: the right to create one (its slot is reserved; call
    /// ``creationFailed()`` if it cannot be created). Waits while every lease is held.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while waiting, and the
    ///   shut-down error after ``shutDown()``.
    func acquire() async throws -> Lease? {
        switch state.withLock({ $0.machine.acquireWithoutWaiting() }) {
        case .use(let lease):
            return lease
        case .open:
            return nil
        case .shutDown:
            throw shutDownError()
        case .wait, .cancelled, nil:
            return try await wait()
        }
    }

    /// A held lease comes back: it goes to the first waiter, or to the idle ones. Returns it
    /// when the leases were shut down meanwhile, for the caller to dispose of.
    func release(_ lease: Lease) -> Lease? {
        switch state.withLock({ $0.machine.release(lease) }) {
        case .resume(let waiter, let lease):
            waiter.resume(returning: lease)
            return nil
        case .keep:
            return nil
        case .close(let lease):
            return lease
        }
    }

    /// Creating a lease failed: its slot passes to the first waiter (who may try), if any.
    func creationFailed() {
        state.withLock { $0.machine.openFailed() }?.resume(returning: nil)
    }

    /// Fails the waiting callers and every later ``acquire()``; returns the idle leases to
    /// dispose of. Held ones come back through ``release(_:)``.
    func shutDown() -> [Lease] {
        let (idle, waiters) = state.withLock { $0.machine.shutDown() }
        for waiter in waiters {
            waiter.resume(throwing: shutDownError())
        }
        return idle
    }

    /// Queues the caller until a lease is released to it (or the right to create one, `nil`),
    /// unless one is free by the time it is queued.
    private func wait() async throws -> Lease? {
        let waiterID = state.withLock { state in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: Waiter) in
                let action = state.withLock {
                    $0.machine.acquire(waiterID: waiterID, waiter: waiter, isCancelled: Task.isCancelled)
                }
                switch action {
                case .use(let lease):
                    waiter.resume(returning: lease)
                case .open:
                    waiter.resume(returning: nil)
                case .wait:
                    break
                case .cancelled:
                    waiter.resume(throwing: CancellationError())
                case .shutDown:
                    waiter.resume(throwing: shutDownError())
                }
            }
        } onCancel: {
            state.withLock { $0.machine.cancel(waiterID: waiterID) }?.resume(throwing: CancellationError())
        }
    }
}
