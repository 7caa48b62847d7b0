/// The bookkeeping of ``RedisClient``'s pool, free of I/O and locks so that it can be tested on
/// its own: which connections are idle, how many exist, who waits. The pool holds it in a mutex
/// and carries out the actions it returns (resume a waiter, open or close a connection) outside.
///
/// A waiter is resumed with a connection, or with `nil`: the right to open a new one (the slot of
/// a connection that failed to open passes to the next waiter, so nobody waits for a connection
/// that will never come).
struct RedisConnectionPoolStateMachine<Connection, Waiter> {
    /// What ``acquire(waiterID:waiter:isCancelled:)`` decided.
    enum AcquireAction {
        /// Use this idle connection.
        case use(Connection)
        /// Open a new connection (a slot was reserved for it).
        case open
        /// The waiter was queued; it is resumed by a later release, failed open or shutdown.
        case wait
        /// The caller is cancelled and would have had to wait.
        case cancelled
        /// The pool is shut down.
        case shutDown
    }

    /// What ``release(_:)`` decided.
    enum ReleaseAction {
        /// Hand the connection to this waiter.
        case resume(Waiter, Connection)
        /// The connection went back to the idle list.
        case keep
        /// The pool is shut down: close the connection.
        case close(Connection)
    }

    let capacity: Int
    private var idle: [Connection] = []
    private var waiters: [(id: Int, waiter: Waiter)] = []
    private var isShutDown = false

    /// Connections open, leased or being opened; never more than ``capacity``.
    private(set) var connectionCount = 0

    /// The number of callers waiting.
    var waiterCount: Int {
        waiters.count
    }

    init(capacity: Int) {
        precondition(capacity > 0, "a pool needs room for one connection")
        self.capacity = capacity
    }

    /// A caller wants a connection; `waiter` is queued under `waiterID` if it has to wait.
    mutating func acquire(waiterID: Int, waiter: Waiter, isCancelled: Bool) -> AcquireAction {
        if let action = acquireWithoutWaiting() {
            return action
        }
        if isCancelled {
            return .cancelled
        }
        waiters.append((waiterID, waiter))
        return .wait
    }

    /// A caller wants a connection if it need not wait for one: `.use`, `.open` or `.shutDown`,
    /// or `nil` when every connection is leased (then ``acquire(waiterID:waiter:isCancelled:)``
    /// queues it). Most leases end here, without a waiter to create.
    mutating func acquireWithoutWaiting() -> AcquireAction? {
        if isShutDown {
            return .shutDown
        }
        if let connection = idle.popLast() {
            return .use(connection)
        }
        if connectionCount < capacity {
            connectionCount += 1
            return .open
        }
        return nil
    }

    /// A leased connection comes back.
    mutating func release(_ connection: Connection) -> ReleaseAction {
        if isShutDown {
            connectionCount -= 1
            return .close(connection)
        }
        if !waiters.isEmpty {
            return .resume(waiters.removeFirst().waiter, connection)
        }
        idle.append(connection)
        return .keep
    }

    /// Opening a connection failed: its slot goes to the first waiter (resume it with `nil`), if any.
    mutating func openFailed() -> Waiter? {
        if !isShutDown, !waiters.isEmpty {
            return waiters.removeFirst().waiter
        }
        connectionCount -= 1
        return nil
    }

    /// A waiting caller was cancelled: returns its waiter (to resume with an error) if still queued.
    mutating func cancel(waiterID: Int) -> Waiter? {
        guard let index = waiters.firstIndex(where: { $0.id == waiterID }) else { return nil }
        return waiters.remove(at: index).waiter
    }

    /// Shuts the pool down: returns the idle connections to close and the waiters to fail.
    /// Leased connections are closed when they come back.
    mutating func shutDown() -> (idle: [Connection], waiters: [Waiter]) {
        isShutDown = true
        let closing = idle
        let failing = waiters.map(\.waiter)
        idle = []
        waiters = []
        connectionCount -= closing.count
        return (closing, failing)
    }
}
