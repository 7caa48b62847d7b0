import Logging

/// A bounded pool of ``RedisConnection``s to one server: the type most code uses.
///
/// Connections open lazily, at most ``RedisConfiguration/poolSize`` of them; a caller that finds
/// them all busy suspends (no thread is blocked) until one is released, in arrival order. The only
/// queue is the waiting callers themselves, and a cancelled caller leaves it at once. Connections
/// re-open themselves after the server went away (see ``RedisConnection``).
public final class RedisClient: Sendable {
    /// The configuration every connection of the pool uses.
    public let configuration: RedisConfiguration
    private let logger: Logger
    private let connections: RedisLeases<RedisConnection>

    /// Creates a pool; no connection is opened until the first command.
    public init(
        configuration: RedisConfiguration,
        logger: Logger = Logger(label: "pushfleet.redis", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.configuration = configuration
        self.logger = logger
        self.connections = RedisLeases(capacity: configuration.poolSize) {
            RedisClientError(.clientShutdown, message: "the Redis client was shut down")
        }
    }

    /// Connections currently open, leased or being opened (at most the pool size).
    var connectionCount: Int {
        connections.count
    }

    /// Callers waiting for a connection.
    var waiterCount: Int {
        connections.waiterCount
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
        for connection in connections.shutDown() {
            await connection.close()
        }
    }

    private func lease() async throws -> RedisConnection {
        if let connection = try await connections.acquire() {
            return connection
        }
        do {
            return try await RedisConnection.connect(configuration: configuration, logger: logger)
        } catch {
            connections.creationFailed()
            throw error
        }
    }

    private func release(_ connection: RedisConnection) {
        // A connection dropped after shutdown frees its hiredis context when deinitialised.
        _ = connections.release(connection)
    }
}
