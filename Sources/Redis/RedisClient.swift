import Logging
import Synchronization

/// A bounded pool of ``RedisConnection``s to one server: the type most code uses.
///
/// Connections open lazily, at most ``RedisConfiguration/poolSize`` of them; a caller that finds
/// them all busy suspends (no thread is blocked) until one is released, in arrival order. The only
/// queue is the waiting callers themselves, and a cancelled caller leaves it at once. Connections
/// re-open themselves after the server went away (see ``RedisConnection``).
public final class RedisClient: Sendable {
    private typealias Waiter = CheckedContinuation<RedisConnection?, any Error>
    private typealias StateMachine = RedisConnectionPoolStateMachine<RedisConnection, Waiter>

    private struct State {
        var machine: StateMachine
        var nextWaiterID = 0
    }

    /// The configuration every connection of the pool uses.
    public let configuration: RedisConfiguration
    private let logger: Logger
    private let state: Mutex<State>

    /// Creates a pool; no connection is opened until the first command.
    public init(
        configuration: RedisConfiguration,
        logger: Logger = Logger(label: "pushfleet.redis", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.configuration = configuration
        self.logger = logger
        self.state = Mutex(State(machine: StateMachine(capacity: configuration.poolSize)))
    }

    /// Connections currently open, leased or being opened (at most the pool size).
    var connectionCount: Int {
        state.withLock { $0.machine.connectionCount }
    }

    /// Callers waiting for a connection.
    var waiterCount: Int {
        state.withLock { $0.machine.waiterCount }
    }

    /// Leases a connection for the duration of `operation` (for several commands in a row, or a
    /// `WATCH`/`MULTI`/`EXEC` transaction), waiting if all are busy.
    ///
    /// - Throws: `CancellationError` if the task is cancelled while waiting, ``RedisClientError``
    ///   (`connectionFailed`, `authenticationFailed`, `clientShutdown`), and what `operation` throws.
    public func withConnection<Value>(
        isolation: isolated (any Actor)? = #isolation,
        _ operation: (RedisConnection) async throws -> sending Value
    ) async throws -> sending Value {
        let connection = try await lease()
        do {
            let value = try await operation(connection)
            release(connection)
            return value
        } catch {
            release(connection)
            throw error
        }
    }

    /// Sends one command on a pooled connection; see ``RedisConnection/send(_:)``.
    public func send(_ arguments: [RedisArgument]) async throws -> RedisReply {
        try await withConnection { try await $0.send(arguments) }
    }

    /// Sends a pipelined batch on one pooled connection; see ``RedisConnection/pipeline(_:)``.
    public func pipeline(_ commands: [[RedisArgument]]) async throws -> [RedisReply] {
        try await withConnection { try await $0.pipeline(commands) }
    }

    /// Runs a script on a pooled connection; see ``RedisConnection/evalScript(_:keys:arguments:)``.
    public func evalScript(
        _ script: RedisScript,
        keys: [RedisArgument] = [],
        arguments: [RedisArgument] = []
    ) async throws -> RedisReply {
        try await withConnection { try await $0.evalScript(script, keys: keys, arguments: arguments) }
    }

    /// Closes the idle connections and fails the waiting callers with `clientShutdown`;
    /// connections in use close when released. Later calls throw `clientShutdown`.
    public func shutdown() async {
        let (idle, waiters) = state.withLock { $0.machine.shutDown() }
        for waiter in waiters {
            waiter.resume(throwing: Self.shutDownError())
        }
        for connection in idle {
            await connection.close()
        }
    }

    private func lease() async throws -> RedisConnection {
        let leased: RedisConnection?
        switch state.withLock({ $0.machine.acquireWithoutWaiting() }) {
        case .use(let connection):
            return connection
        case .open:
            leased = nil
        case .shutDown:
            throw Self.shutDownError()
        case .wait, .cancelled, nil:
            leased = try await waitForConnection()
        }
        if let leased {
            return leased
        }
        do {
            return try await RedisConnection.connect(configuration: configuration, logger: logger)
        } catch {
            state.withLock { $0.machine.openFailed() }?.resume(returning: nil)
            throw error
        }
    }

    /// Queues the caller until a connection is released to it (or the right to open one, `nil`),
    /// unless one is free by the time it is queued.
    private func waitForConnection() async throws -> RedisConnection? {
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
                case .use(let connection):
                    waiter.resume(returning: connection)
                case .open:
                    waiter.resume(returning: nil)
                case .wait:
                    break
                case .cancelled:
                    waiter.resume(throwing: CancellationError())
                case .shutDown:
                    waiter.resume(throwing: Self.shutDownError())
                }
            }
        } onCancel: {
            state.withLock { $0.machine.cancel(waiterID: waiterID) }?.resume(throwing: CancellationError())
        }
    }

    private func release(_ connection: RedisConnection) {
        switch state.withLock({ $0.machine.release(connection) }) {
        case .resume(let waiter, let connection):
            waiter.resume(returning: connection)
        case .keep, .close:
            // A connection dropped after shutdown frees its hiredis context when deinitialised.
            break
        }
    }

    private static func shutDownError() -> RedisClientError {
        RedisClientError(.clientShutdown, message: "the Redis client was shut down")
    }
}
