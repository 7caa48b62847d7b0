import CHiredis
import Dispatch
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One hiredis `redisContext` and the serial queue it is confined to: the only type in the module
/// that touches a C handle.
///
/// `@unchecked Sendable` because every access to the mutable state (`context`, `isClosed`) happens
/// on `queue`: the async entry points (``connect()``, ``execute(_:)``, ``close()``) hop onto it
/// with a continuation, and the `blocking…` methods run only there. hiredis's synchronous calls,
/// the reconnect backoff included, therefore block this queue's thread, never a thread of Swift's
/// cooperative pool. A command whose task is cancelled still runs to completion on the queue.
final class HiredisConnection: @unchecked Sendable {
    let configuration: RedisConfiguration
    private let logger: Logger
    private let queue: DispatchQueue
    /// The live context, or `nil` before the first connect and after a failure that desynchronised it.
    private var context: UnsafeMutablePointer<redisContext>?
    private var isClosed = false

    init(configuration: RedisConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.queue = DispatchQueue(label: "pushfleet.redis.connection(\(configuration.endpoint))")
    }

    deinit {
        if let context {
            redisFree(context)
        }
    }

    /// Connects now (with the reconnect policy) unless already connected.
    func connect() async throws {
        try await perform { connection in
            _ = try connection.blockingConnectedContext()
        }
    }

    /// Sends `commands` in one write and reads one reply per command. Error replies are returned
    /// as ``RedisReply/error(_:)``; transport failures throw and drop the context, so the next
    /// call reconnects.
    func execute(_ commands: HiredisCommandBuffer) async throws -> [RedisReply] {
        try await perform { connection in
            try connection.blockingExecute(commands)
        }
    }

    /// Frees the context; later calls throw ``RedisClientError/Code/connectionClosed``.
    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.isClosed = true
                self.dropContext()
                continuation.resume()
            }
        }
    }

    private func perform<Value: Sendable>(
        _ body: @escaping @Sendable (HiredisConnection) throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try body(self) })
            }
        }
    }

    // MARK: - On the queue

    private func blockingExecute(_ commands: HiredisCommandBuffer) throws -> [RedisReply] {
        let context = try blockingConnectedContext()
        do {
            return try Self.roundTrip(commands, on: context, configuration: configuration)
        } catch {
            dropContext()
            throw error
        }
    }

    /// The live context; reconnects first if there is none or the server has closed it.
    private func blockingConnectedContext() throws -> UnsafeMutablePointer<redisContext> {
        guard !isClosed else {
            throw RedisClientError(
                .connectionClosed,
                message: "the connection to \(configuration.endpoint) was closed by the client",
                isRetryable: false
            )
        }
        if let context {
            if Self.isIdleAndOpen(context) {
                return context
            }
            logger.debug("Redis connection found closed by the server; reconnecting", metadata: metadata)
            dropContext()
        }
        let context = try blockingConnectWithBackoff()
        self.context = context
        return context
    }

    private func blockingConnectWithBackoff() throws -> UnsafeMutablePointer<redisContext> {
        let policy = configuration.reconnect
        var lastError: RedisClientError?
        for attempt in 1...policy.maxAttempts {
            let delay = policy.delay(beforeAttempt: attempt)
            if delay > .zero {
                Self.sleep(delay)
            }
            do {
                let context = try blockingConnectOnce()
                if attempt > 1 {
                    logger.info("Reconnected to Redis", metadata: metadata.merging(["attempt": "\(attempt)"]) { $1 })
                }
                return context
            } catch let error as RedisClientError where !error.isRetryable {
                throw error
            } catch let error as RedisClientError {
                lastError = error
                logger.debug(
                    "Redis connection attempt failed",
                    metadata: metadata.merging(["attempt": "\(attempt)", "error": "\(error.message)"]) { $1 }
                )
            }
        }
        throw RedisClientError(
            .connectionFailed,
            message: "could not connect to \(configuration.endpoint) after \(policy.maxAttempts) attempt(s): "
                + (lastError?.message ?? "unknown error"),
            underlying: lastError
        )
    }

    /// One attempt: TCP connect, timeouts, then `AUTH`, `SELECT` and `CLIENT SETNAME` as configured.
    private func blockingConnectOnce() throws -> UnsafeMutablePointer<redisContext> {
        let endpoint = configuration.endpoint
        guard let context = redisConnectWithTimeout(
            configuration.host, Int32(configuration.port), Self.makeTimeval(configuration.connectTimeout)
        ) else {
            throw RedisClientError(.connectionFailed, message: "hiredis could not allocate a context for \(endpoint)")
        }
        do {
            if context.pointee.err != 0 {
                let reason = Self.errorText(context)
                let code: RedisClientError.Code = reason.contains("timed out") ? .timeout : .connectionFailed
                throw RedisClientError(code, message: "connecting to \(endpoint): \(reason)")
            }
            if let commandTimeout = configuration.commandTimeout,
                redisSetTimeout(context, Self.makeTimeval(commandTimeout)) != REDIS_OK
            {
                throw RedisClientError(.connectionFailed, message: "setting timeouts on \(endpoint): \(Self.errorText(context))")
            }
            _ = redisEnableKeepAlive(context)
            try blockingHandshake(on: context)
            return context
        } catch {
            redisFree(context)
            throw error
        }
    }

    private func blockingHandshake(on context: UnsafeMutablePointer<redisContext>) throws {
        let endpoint = configuration.endpoint
        var commands: [[RedisArgument]] = []
        if let password = configuration.password {
            if let username = configuration.username {
                commands.append(["AUTH", .string(username), .string(password)])
            } else {
                commands.append(["AUTH", .string(password)])
            }
        }
        if configuration.database != 0 {
            commands.append(["SELECT", .integer(configuration.database)])
        }
        if let clientName = configuration.clientName {
            commands.append(["CLIENT", "SETNAME", .string(clientName)])
        }
        guard !commands.isEmpty else { return }
        let replies = try Self.roundTrip(HiredisCommandBuffer(commands), on: context, configuration: configuration)
        for (command, reply) in zip(commands, replies) {
            guard case .error(let message) = reply else { continue }
            if command.first == "AUTH" {
                let user = configuration.username ?? "default"
                throw RedisClientError(
                    .authenticationFailed,
                    message: "\(endpoint) refused AUTH as user '\(user)': \(message)"
                )
            }
            let name = command.prefix(2).compactMap { argument in
                if case .string(let text) = argument { text } else { nil }
            }
            throw RedisClientError(
                .serverError,
                message: "\(endpoint) refused \(name.joined(separator: " ")) while connecting: \(message)",
                isRetryable: false
            )
        }
    }

    private func dropContext() {
        if let context {
            redisFree(context)
            self.context = nil
        }
    }

    private var metadata: Logger.Metadata {
        ["redis.endpoint": "\(configuration.endpoint)"]
    }

    // MARK: - hiredis calls

    private static func roundTrip(
        _ commands: HiredisCommandBuffer,
        on context: UnsafeMutablePointer<redisContext>,
        configuration: RedisConfiguration
    ) throws -> [RedisReply] {
        let appended = commands.withEncodedCommands { bytes, count in
            redisAppendFormattedCommand(context, bytes, count)
        }
        guard appended == REDIS_OK else {
            throw transportError(context, errorNumber: errno, configuration: configuration)
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in 0..<commands.count {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReply(context, &raw) == REDIS_OK, let raw else {
                throw transportError(context, errorNumber: errno, configuration: configuration)
            }
            replies.append(RedisReply(hiredis: raw.assumingMemoryBound(to: redisReply.self)))
            freeReplyObject(raw)
        }
        return replies
    }

    /// Maps hiredis's error state after a failed call. A read or write that hit `SO_RCVTIMEO` /
    /// `SO_SNDTIMEO` fails with `EAGAIN`, which is the command timeout.
    private static func transportError(
        _ context: UnsafeMutablePointer<redisContext>,
        errorNumber: Int32,
        configuration: RedisConfiguration
    ) -> RedisClientError {
        let endpoint = configuration.endpoint
        let reason = errorText(context)
        switch context.pointee.err {
        case REDIS_ERR_IO where errorNumber == EAGAIN || errorNumber == EWOULDBLOCK:
            let limit = configuration.commandTimeout.map { "\($0)" } ?? "the timeout"
            return RedisClientError(.timeout, message: "no reply from \(endpoint) within \(limit)")
        case REDIS_ERR_IO, REDIS_ERR_EOF:
            return RedisClientError(.connectionClosed, message: "connection to \(endpoint) lost: \(reason)")
        case REDIS_ERR_PROTOCOL:
            return RedisClientError(.protocolError, message: "malformed reply from \(endpoint): \(reason)")
        default:
            return RedisClientError(.connectionClosed, message: "hiredis failed on \(endpoint): \(reason)")
        }
    }

    /// Whether an idle context can take a command: no error recorded, and nothing to read on the
    /// socket. An idle RESP2 connection has nothing to read unless the server closed it (or sent
    /// something unsolicited, which would pair replies with the wrong commands), so either way the
    /// context is replaced before anything is sent and no command is lost or sent twice.
    private static func isIdleAndOpen(_ context: UnsafeMutablePointer<redisContext>) -> Bool {
        guard context.pointee.err == 0, context.pointee.fd >= 0 else { return false }
        var descriptor = pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, 0)
        return ready == 0 || (ready < 0 && errno == EINTR)
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: &context.pointee.errstr) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    private static func makeTimeval(_ duration: Duration) -> timeval {
        let (seconds, attoseconds) = duration.components
        return timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }

    private static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR {
            request = remaining
        }
    }
}
