import Logging

/// One connection to a Redis server.
///
/// Commands run one at a time, in call order: a batch is written from the caller's thread and its
/// replies read by ``RedisEventLoop``; the async methods suspend the caller until they arrive. The connection is
/// opened by ``connect(configuration:logger:)`` and re-opened transparently, with the configured
/// backoff, by the first command after the server has gone away. A command that was already on
/// the wire when the connection broke throws a retryable ``RedisClientError`` and is never resent.
public final class RedisConnection: Sendable {
    /// The configuration the connection was opened with.
    public let configuration: RedisConfiguration
    let hiredis: HiredisConnection

    private init(configuration: RedisConfiguration, logger: Logger) {
        self.configuration = configuration
        self.hiredis = HiredisConnection(configuration: configuration, logger: logger)
    }

    /// Opens a connection, authenticates and selects the database, retrying per
    /// ``RedisConfiguration/reconnect``.
    ///
    /// - Throws: ``RedisClientError`` — `connectionFailed` naming host:port when every attempt
    ///   failed, `authenticationFailed` when `AUTH` is refused.
    public static func connect(
        configuration: RedisConfiguration,
        logger: Logger = Logger(label: "pushfleet.redis", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> RedisConnection {
        let connection = RedisConnection(configuration: configuration, logger: logger)
        try await connection.hiredis.connect()
        return connection
    }

    /// Sends one command and returns its reply.
    ///
    /// - Throws: ``RedisClientError`` — `serverError` with the server's message for an error
    ///   reply; `connectionClosed` or `timeout` (retryable, the command may have run) when the
    ///   connection broke or stayed silent; `connectionFailed` when it could not be re-opened.
    public func send(_ arguments: [RedisArgument]) async throws -> RedisReply {
        let reply = try await hiredis.execute(HiredisCommandBuffer([arguments]))[0]
        if case .error(let message) = reply {
            throw RedisClientError(.serverError, message: message)
        }
        return reply
    }

    /// Sends one command and returns its reply: `send("SET", "key", .bytes(value))`.
    public func send(_ arguments: RedisArgument...) async throws -> RedisReply {
        try await send(arguments)
    }

    /// Sends `commands` in one batch (one write, then one read per reply) and returns their
    /// replies in order. A command the server rejects yields ``RedisReply/error(_:)`` in its place
    /// rather than a throw, so the other replies are not lost.
    ///
    /// - Throws: ``RedisClientError`` for transport failures only; the batch may have partly run.
    public func pipeline(_ commands: [[RedisArgument]]) async throws -> [RedisReply] {
        guard !commands.isEmpty else { return [] }
        return try await hiredis.execute(HiredisCommandBuffer(commands))
    }

    /// Closes the connection. Later commands throw `connectionClosed` (not retryable).
    public func close() async {
        await hiredis.close()
    }
}
