import CHiredis
import Dispatch
import FlowControl
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One hiredis `redisContext`: the only type in the module that touches a C handle.
///
/// One call at a time holds the context, through a lease (``RedisLeases`` of one; concurrent
/// callers queue in arrival order). A batch on a live context is written from the caller's
/// thread and its replies read by ``RedisEventLoop``, whose thread ends the call; connecting
/// (hiredis's blocking calls, the reconnect backoff included) runs on the connection's serial
/// queue, never on a thread of Swift's cooperative pool. Whoever holds the lease touches
/// `context` (the caller's thread, the queue, then the event loop, one after the other), and
/// the lease passes on only once the context is free for the next call. `@unchecked Sendable`
/// for that reason. Outside the lease, under `socket`'s lock: ``close()`` and a cancelled
/// caller shut the live socket down, so that a call waiting on a silent server ends at once.
///
/// A caller whose task is cancelled stops waiting at once (`CancellationError`): a command not
/// yet started is skipped, one already on the wire is cut off (the socket is shut down), and
/// either way the context is discarded, so that no state of an abandoned sequence (`MULTI`,
/// `ASKING`) reaches the next command; the next call reconnects. Like a timeout, a cancelled
/// command may or may not have run on the server.
final class HiredisConnection: @unchecked Sendable {
    /// What a ``RedisLeases`` of one hands out: the right to use the context.
    private struct Turn: Sendable {}

    let configuration: RedisConfiguration
    private let logger: Logger
    private let queue: DispatchQueue
    private let turns: RedisLeases<Turn>
    /// The live context, or `nil` before the first connect and after a failure that desynchronised it.
    private var context: UnsafeMutablePointer<redisContext>?
    /// The live context's socket, and whether the connection was closed by the client: so that
    /// a close or a cancelled caller can shut the socket down while a call waits on it, and no
    /// call uses a context after a close.
    private let socket = Mutex<(descriptor: Int32?, isClosed: Bool)>((nil, false))

    init(configuration: RedisConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.queue = DispatchQueue(label: "pushfleet.redis.connection(\(configuration.endpoint))")
        let endpoint = configuration.endpoint
        self.turns = RedisLeases(capacity: 1) {
            RedisClientError(.connectionClosed, message: "the connection to \(endpoint) was closed by the client", isRetryable: false)
        }
    }

    /// Callers queued for their turn behind the call that holds the context.
    var waitingCallers: Int {
        turns.waiterCount
    }

    deinit {
        if let context {
            redisFree(context)
        }
    }

    /// Connects now (with the reconnect policy) unless already connected.
    func connect() async throws {
        _ = try await execute(HiredisCommandBuffer([]))
    }

    /// Sends `commands` in one write and reads one reply per command. Error replies are returned
    /// as ``RedisReply/error(_:)``; transport failures throw and drop the context, so the next
    /// call reconnects. An empty batch only connects.
    func execute(_ commands: HiredisCommandBuffer) async throws -> [RedisReply] {
        _ = try await turns.acquire()
        // From here every path ends in exactly one `finish(_:_:)`, which passes the turn on.
        let call = BlockingCall<[RedisReply]>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard call.start(continuation) else {
                    passTurnOn()
                    return
                }
                begin(commands, call)
            }
        } onCancel: {
            call.cancel()
            socket.withLock { Self.abort($0.descriptor) }
        }
    }

    /// Closes the connection; later calls throw ``RedisClientError/Code/connectionClosed``. A
    /// call waiting on the socket (a server that stopped answering) fails at once with
    /// `connectionClosed` instead of waiting for its timeout; the context is freed now, or by
    /// the call holding it when it ends.
    func close() async {
        socket.withLock { socket in
            socket.isClosed = true
            Self.abort(socket.descriptor)
        }
        if !turns.shutDown().isEmpty {
            dropContext()
        }
    }

    /// Sends on the live context from the caller's thread, or connects first on the queue.
    private func begin(_ commands: HiredisCommandBuffer, _ call: BlockingCall<[RedisReply]>) {
        if let context, !socket.withLock({ $0.isClosed }), Self.isIdleAndOpen(context) {
            transmit(commands, on: context, call)
            return
        }
        queue.async {
            do {
                let context = try self.blockingConnectedContext(call)
                self.transmit(commands, on: context, call)
            } catch {
                self.finish(call, .failure(error))
            }
        }
    }

    /// Hands the batch to the event loop, which ends the call with its replies.
    private func transmit(
        _ commands: HiredisCommandBuffer, on context: UnsafeMutablePointer<redisContext>, _ call: BlockingCall<[RedisReply]>
    ) {
        guard commands.count > 0, !call.isCancelled else {
            // Nothing sent: a connect only, or a caller that stopped waiting meanwhile (whose
            // context `finish` discards, as for any abandoned call).
            finish(call, call.isCancelled ? .failure(CancellationError()) : .success([]))
            return
        }
        let exchange = RedisExchange(
            descriptor: context.pointee.fd,
            reader: context.pointee.reader,
            output: commands.bytes,
            expected: commands.count,
            timeout: configuration.commandTimeout
        ) { outcome in
            switch outcome {
            case .replies(let replies, let isReusable):
                if !isReusable {
                    self.dropContext()
                }
                self.finish(call, .success(replies))
            case .closedByPeer, .failed, .protocolError, .timedOut:
                self.dropContext()
                self.finish(call, .failure(Self.transportError(outcome, configuration: self.configuration)))
            }
        }
        RedisEventLoop.shared.start(exchange)
    }

    /// Ends the call: a caller that stopped waiting leaves its context behind (it may be in the
    /// middle of a sequence), then the turn passes on, then the caller resumes.
    private func finish(_ call: BlockingCall<[RedisReply]>, _ result: Result<[RedisReply], any Error>) {
        let caller = call.detachCaller()
        if caller == nil {
            dropContext()
        }
        passTurnOn()
        caller?.resume(with: result)
    }

    private func passTurnOn() {
        if turns.release(Turn()) != nil {
            // Closed meanwhile: nobody will use the context again.
            dropContext()
        }
    }

    /// Ends what blocks on the socket (a read, a write): both directions are shut down, the
    /// descriptor stays open until the queue frees the context. Call under `socket`'s lock.
    private static func abort(_ descriptor: Int32?) {
        if let descriptor, descriptor >= 0 {
            _ = shutdown(descriptor, Int32(SHUT_RDWR))
        }
    }

    // MARK: - On the queue

    /// The live context; reconnects first if there is none or the server has closed it.
    private func blockingConnectedContext<Value>(_ call: BlockingCall<Value>) throws -> UnsafeMutablePointer<redisContext> {
        try throwIfClosed()
        if let context {
            if Self.isIdleAndOpen(context) {
                return context
            }
            logger.debug("Redis connection found closed by the server; reconnecting", metadata: metadata)
            dropContext()
        }
        let context = try blockingConnectWithBackoff(call)
        self.context = context
        return context
    }

    private func throwIfClosed() throws {
        guard socket.withLock({ $0.isClosed }) else { return }
        throw RedisClientError(
            .connectionClosed,
            message: "the connection to \(configuration.endpoint) was closed by the client",
            isRetryable: false
        )
    }

    /// Connection attempts as the reconnect policy says, until one succeeds, the connection is
    /// closed, or the caller gave up (then the caller has its `CancellationError` already, and
    /// what this throws is dropped).
    private func blockingConnectWithBackoff<Value>(_ call: BlockingCall<Value>) throws -> UnsafeMutablePointer<redisContext> {
        let policy = configuration.reconnect
        var lastError: RedisClientError?
        for attempt in 1...policy.maxAttempts {
            let delay = policy.delay(beforeAttempt: attempt)
            if delay > .zero {
                Self.sleep(delay)
            }
            if call.isCancelled {
                throw CancellationError()
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
        guard
            let context = redisConnectWithTimeout(
                configuration.host, Int32(configuration.port), Self.makeTimeval(configuration.connectTimeout)
            )
        else {
            throw RedisClientError(.connectionFailed, message: "hiredis could not allocate a context for \(endpoint)")
        }
        do {
            // Published before the first read, so that a close can unblock the handshake too.
            let open = socket.withLock { socket in
                guard !socket.isClosed else { return false }
                socket.descriptor = context.pointee.fd
                return true
            }
            guard open else {
                throw RedisClientError(
                    .connectionClosed, message: "the connection to \(endpoint) was closed by the client", isRetryable: false)
            }
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
            socket.withLock { $0.descriptor = nil }
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
            // The descriptor is unpublished first: once freed, its number may name another socket.
            socket.withLock { $0.descriptor = nil }
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
            throw transportError(failure(of: context, errorNumber: errno), configuration: configuration)
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in 0..<commands.count {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReply(context, &raw) == REDIS_OK, let raw else {
                throw transportError(failure(of: context, errorNumber: errno), configuration: configuration)
            }
            replies.append(RedisReply(hiredis: raw.assumingMemoryBound(to: redisReply.self)))
            freeReplyObject(raw)
        }
        return replies
    }

    /// hiredis's error state after a failed blocking call (the handshake), in the event loop's
    /// terms. A read or write that hit `SO_RCVTIMEO` / `SO_SNDTIMEO` fails with `EAGAIN`, which
    /// is the command timeout.
    private static func failure(of context: UnsafeMutablePointer<redisContext>, errorNumber: Int32) -> RedisExchangeOutcome {
        switch context.pointee.err {
        case REDIS_ERR_IO where errorNumber == EAGAIN || errorNumber == EWOULDBLOCK: .timedOut
        case REDIS_ERR_IO, REDIS_ERR_EOF: .failed(reason: errorText(context))
        case REDIS_ERR_PROTOCOL: .protocolError(errorText(context))
        default: .failed(reason: "hiredis: " + errorText(context))
        }
    }

    /// The error for a batch that did not finish, on the event loop or in a blocking call.
    private static func transportError(_ outcome: RedisExchangeOutcome, configuration: RedisConfiguration) -> RedisClientError {
        let endpoint = configuration.endpoint
        switch outcome {
        case .timedOut:
            let limit = configuration.commandTimeout.map { "\($0)" } ?? "the timeout"
            return RedisClientError(.timeout, message: "no reply from \(endpoint) within \(limit)")
        case .closedByPeer, .replies:
            return RedisClientError(.connectionClosed, message: "connection to \(endpoint) lost: the server closed it")
        case .failed(let reason):
            return RedisClientError(.connectionClosed, message: "connection to \(endpoint) lost: \(reason)")
        case .protocolError(let reason):
            return RedisClientError(.protocolError, message: "malformed reply from \(endpoint): \(reason)")
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
