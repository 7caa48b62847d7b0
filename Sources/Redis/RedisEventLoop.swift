import CEpoll
import CHiredis
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What became of an ``RedisExchange``.
enum RedisExchangeOutcome {
    /// Every reply came. `isReusable` is false when bytes no command asked for followed them
    /// (or the server closed the connection right after): the context must not take another
    /// command, since a reply would be paired with the wrong one.
    case replies([RedisReply], isReusable: Bool)
    /// The server closed the connection before the last reply.
    case closedByPeer
    /// A socket read or write failed, for this reason.
    case failed(reason: String)
    /// hiredis could not parse the replies.
    case protocolError(String)
    /// Neither a byte written nor a byte read within the command timeout.
    case timedOut

    /// A socket read or write failed with this `errno`.
    static func failed(errorNumber: Int32) -> Self {
        .failed(reason: String(cString: strerror(errorNumber)))
    }
}

/// One pipelined batch on the wire: the encoded commands still to write, the replies read so
/// far, and what to do when it ends.
///
/// Created by the connection that holds its hiredis context; once handed to
/// ``RedisEventLoop/start(_:)`` it belongs to the loop's thread alone, which ends it exactly
/// once through `completion`. The context stays the connection's: the exchange only uses its
/// socket and reply reader, and the connection frees nothing before the completion has run.
final class RedisExchange: @unchecked Sendable {
    let descriptor: Int32
    private let reader: UnsafeMutablePointer<redisReader>
    private let output: [UInt8]
    private var written = 0
    private let expected: Int
    private var replies: [RedisReply] = []
    private let timeout: Duration?
    /// When the exchange times out unless a byte moves before; pushed back by every read and
    /// write that makes progress, as a socket timeout would be.
    fileprivate private(set) var deadline: ContinuousClock.Instant?
    private let completion: (RedisExchangeOutcome) -> Void

    /// `output` holds `expected` encoded commands (at least one); `timeout` is the longest
    /// silence accepted (`nil`: none).
    init(
        descriptor: Int32,
        reader: UnsafeMutablePointer<redisReader>,
        output: [UInt8],
        expected: Int,
        timeout: Duration?,
        completion: @escaping (RedisExchangeOutcome) -> Void
    ) {
        precondition(expected > 0, "an exchange reads at least one reply")
        self.descriptor = descriptor
        self.reader = reader
        self.output = output
        self.expected = expected
        self.timeout = timeout
        self.completion = completion
        replies.reserveCapacity(expected)
    }

    fileprivate var hasOutput: Bool {
        written < output.count
    }

    fileprivate func complete(_ outcome: RedisExchangeOutcome) {
        completion(outcome)
    }

    fileprivate func madeProgress(at now: ContinuousClock.Instant) {
        deadline = timeout.map { now + $0 }
    }

    /// Writes what the socket takes without blocking; `nil` when that went well (all written,
    /// or the rest waits for room), the outcome to end with otherwise.
    fileprivate func write() -> RedisExchangeOutcome? {
        let start = written
        while written < output.count {
            let sent = output.withUnsafeBytes { bytes in
                send(descriptor, bytes.baseAddress! + written, bytes.count - written, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            }
            if sent > 0 {
                written += sent
                continue
            }
            guard sent < 0 else { break }
            guard let retry = Self.retriesAfter(errorNumber: errno) else { return .failed(errorNumber: errno) }
            if !retry { break }
        }
        if written > start {
            madeProgress(at: .now)
        }
        return nil
    }

    /// Reads what the socket has into the reply reader and collects the replies it completes;
    /// the outcome once the exchange is over, `nil` while replies are still to come.
    fileprivate func read(into buffer: UnsafeMutableRawBufferPointer) -> RedisExchangeOutcome? {
        var isAtEnd = false
        var progressed = false
        while true {
            let received = recv(descriptor, buffer.baseAddress!, buffer.count, Int32(MSG_DONTWAIT))
            if received > 0 {
                progressed = true
                guard redisReaderFeed(reader, buffer.baseAddress!.assumingMemoryBound(to: CChar.self), received) == REDIS_OK else {
                    return .protocolError(readerError)
                }
                if received < buffer.count { break }
            } else if received == 0 {
                isAtEnd = true
                break
            } else {
                guard let retry = Self.retriesAfter(errorNumber: errno) else { return .failed(errorNumber: errno) }
                if !retry { break }
            }
        }
        if progressed {
            madeProgress(at: .now)
        }
        while replies.count < expected {
            var raw: UnsafeMutableRawPointer?
            guard redisReaderGetReply(reader, &raw) == REDIS_OK else {
                return .protocolError(readerError)
            }
            guard let raw else { break }
            replies.append(RedisReply(hiredis: raw.assumingMemoryBound(to: redisReply.self)))
            freeReplyObject(raw)
        }
        if replies.count == expected {
            let hasLeftover = reader.pointee.len > reader.pointee.pos
            return .replies(replies, isReusable: !isAtEnd && !hasLeftover)
        }
        return isAtEnd ? .closedByPeer : nil
    }

    /// After a non-blocking `send` or `recv` failed: `true` to try again at once (interrupted),
    /// `false` to wait for the socket (nothing to read, no room to write), `nil` when the
    /// connection failed.
    private static func retriesAfter(errorNumber: Int32) -> Bool? {
        switch errorNumber {
        case EINTR: true
        case EAGAIN, EWOULDBLOCK: false
        default: nil
        }
    }

    private var readerError: String {
        withUnsafeBytes(of: &reader.pointee.errstr) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}

/// The thread that waits for every Redis connection's replies: one `epoll` set for the
/// process's sockets, as `redis-benchmark` has one for its clients.
///
/// A caller writes its batch from its own thread and suspends; the loop reads the replies as
/// they arrive, for every connection at once, and ends each exchange from its thread. A batch
/// so costs one wake-up of this thread (often none when it is busy with other sockets) and the
/// caller's resumption, where a blocking read on a connection's own queue cost three thread
/// hops. Sockets stay in blocking mode (connecting and the handshake are blocking calls on the
/// connection's queue); the exchanges read and write with `MSG_DONTWAIT`.
///
/// It is also a `TaskExecutor`. A task that mostly talks to Redis can prefer it
/// (`withTaskExecutorPreference(RedisEventLoop.shared) { … }`): its continuations then resume on
/// the loop's thread, between two waits for sockets, without waking any other thread, which is
/// how `redis-benchmark` runs. Everything such a task does runs on that one thread, so it suits
/// a task that sends batches and does little between them; the default (Swift's global
/// executor) suits the rest.
///
/// Level-triggered: a reply that arrives before its socket is registered is reported at once.
/// Only the loop's thread ends an exchange and removes its socket from the set, so a socket is
/// never freed (its number reused) while registered.
public final class RedisEventLoop: TaskExecutor, @unchecked Sendable {
    /// The process's loop; its thread starts with the first use and lives as long as the process.
    public static let shared = RedisEventLoop()

    private struct Registry {
        var exchanges: [ObjectIdentifier: RedisExchange] = [:]
        var plan = RedisWakePlan()
        /// Jobs of tasks that prefer the loop as their executor, run after each wait.
        var jobs: [UnownedJob] = []
        /// Whether the thread is (about to be) asleep in `epoll_wait`: a job enqueued then
        /// must wake it.
        var isSleeping = false
        /// The loop's thread, once it runs.
        var thread: pthread_t?
    }

    private let epollDescriptor: Int32
    private let wakeDescriptor: Int32
    private let registry = Mutex(Registry())

    private init() {
        epollDescriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeDescriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        precondition(epollDescriptor >= 0 && wakeDescriptor >= 0, "the Redis event loop could not create its epoll set (errno \(errno))")
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = 0
        precondition(epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, wakeDescriptor, &event) == 0, "epoll_ctl failed (errno \(errno))")
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<RedisEventLoop>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, Unmanaged.passRetained(self).toOpaque())
        precondition(started == 0, "the Redis event loop's thread could not start (\(started))")
        pthread_detach(thread)
    }

    /// Writes what the socket takes now, on the caller's thread, and hands the exchange to the
    /// loop, which writes the rest and reads the replies. A write that fails ends the exchange
    /// here, before this returns.
    func start(_ exchange: RedisExchange) {
        exchange.madeProgress(at: .now)
        if let outcome = exchange.write() {
            exchange.complete(outcome)
            return
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | (exchange.hasOutput ? EPOLLOUT.rawValue : 0)
        event.data.u64 = UInt64(UInt(bitPattern: Unmanaged.passUnretained(exchange).toOpaque()))
        // Registered and added to the set in one step, so that the loop never sees a deadline
        // of an exchange not yet in the set, nor ends one before it is.
        let registration = registry.withLock { registry -> (wake: Bool, errorNumber: Int32?) in
            guard epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, exchange.descriptor, &event) == 0 else {
                return (false, errno)
            }
            registry.exchanges[ObjectIdentifier(exchange)] = exchange
            return (registry.isSleeping && registry.plan.needsWake(for: exchange.deadline), nil)
        }
        if let errorNumber = registration.errorNumber {
            exchange.complete(.failed(errorNumber: errorNumber))
        } else if registration.wake {
            _ = eventfd_write(wakeDescriptor, 1)
        }
    }

    /// Whether the caller runs on the loop's thread.
    var isCurrentThread: Bool {
        let current = pthread_self()
        return registry.withLock { registry in registry.thread.map { pthread_equal($0, current) != 0 } ?? false }
    }

    private func run() {
        let current = pthread_self()
        registry.withLock { $0.thread = current }
        let capacity = 64
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        while true {
            // With jobs waiting, only a look at the sockets; otherwise a sleep until a socket is
            // ready, a deadline passes or another thread wakes the loop.
            let sleep = registry.withLock { registry -> Int32? in
                guard registry.jobs.isEmpty else { return nil }
                registry.isSleeping = true
                return registry.plan.planSleep(
                    now: .now, earliestDeadline: registry.exchanges.values.lazy.compactMap(\.deadline).min())
            }
            let ready = epoll_wait(epollDescriptor, events, Int32(capacity), sleep ?? 0)
            if sleep != nil {
                registry.withLock { $0.isSleeping = false }
            }
            if ready < 0 {
                precondition(errno == EINTR, "epoll_wait failed (errno \(errno))")
                continue
            }
            for index in 0..<Int(ready) {
                let event = events[index]
                guard event.data.u64 != 0 else {
                    var count: eventfd_t = 0
                    _ = eventfd_read(wakeDescriptor, &count)
                    continue
                }
                let pointer = UnsafeRawPointer(bitPattern: UInt(event.data.u64))!
                // Registered exchanges are held by the registry until this thread ends them,
                // and each socket appears once per `epoll_wait`.
                let exchange = Unmanaged<RedisExchange>.fromOpaque(pointer).takeUnretainedValue()
                if let outcome = handle(event.events, of: exchange, buffer: buffer) {
                    end(exchange, outcome)
                }
            }
            endTimedOut()
            runJobs()
        }
    }

    /// Takes a job of a task that prefers the loop: it runs on the loop's thread after the
    /// current wait (the thread is woken if it sleeps).
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let wake = registry.withLock { registry in
            registry.jobs.append(job)
            return registry.isSleeping && registry.jobs.count == 1
        }
        if wake {
            _ = eventfd_write(wakeDescriptor, 1)
        }
    }

    private func runJobs() {
        var jobs: [UnownedJob] = []
        registry.withLock { swap(&jobs, &$0.jobs) }
        for job in jobs {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    private func handle(_ events: UInt32, of exchange: RedisExchange, buffer: UnsafeMutableRawBufferPointer) -> RedisExchangeOutcome? {
        if events & EPOLLOUT.rawValue != 0, exchange.hasOutput {
            if let outcome = exchange.write() {
                return outcome
            }
            if !exchange.hasOutput {
                var event = epoll_event()
                event.events = EPOLLIN.rawValue
                event.data.u64 = UInt64(UInt(bitPattern: Unmanaged.passUnretained(exchange).toOpaque()))
                _ = epoll_ctl(epollDescriptor, EPOLL_CTL_MOD, exchange.descriptor, &event)
            }
        }
        guard events & (EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 else { return nil }
        return exchange.read(into: buffer)
    }

    private func endTimedOut() {
        let now = ContinuousClock.now
        let expired = registry.withLock { registry in
            registry.exchanges.values.filter { exchange in exchange.deadline.map { $0 <= now } ?? false }
        }
        for exchange in expired {
            end(exchange, .timedOut)
        }
    }

    private func end(_ exchange: RedisExchange, _ outcome: RedisExchangeOutcome) {
        _ = epoll_ctl(epollDescriptor, EPOLL_CTL_DEL, exchange.descriptor, nil)
        registry.withLock { _ = $0.exchanges.removeValue(forKey: ObjectIdentifier(exchange)) }
        exchange.complete(outcome)
    }
}
