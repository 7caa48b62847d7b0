import NIOCore

/// The shared mutable state of one connection pool: connections and their stream counts, and
/// the callers waiting for a stream. Every event returns what the pool must do; the pool does it
/// outside its lock.
///
/// Streams go to the ready connection with the fewest streams in use, up to the smaller of the
/// server's `SETTINGS_MAX_CONCURRENT_STREAMS` and the configured cap. A caller may ask for
/// several streams at once (a batch of notifications): it gets those free now, spread over the
/// connections, or waits for the first to free up and then gets every stream free at that moment,
/// up to what it asked for. Waiters are served in order and bounded in number.
struct APNsConnectionPoolStateMachine<Waiter> {
    typealias ConnectionID = Int

    /// When a connection should be opened.
    enum ConnectDelay: Hashable {
        case immediately
        /// After `n` × the connection spacing (the pool's first connections).
        case spacing(Int)
        /// After the backoff for the `n`-th consecutive failure.
        case backoff(Int)
    }

    /// Open a connection with this id after this delay.
    struct Connect: Hashable {
        var id: ConnectionID
        var delay: ConnectDelay
    }

    /// Streams on one connection.
    struct Grant: Hashable {
        var connection: ConnectionID
        var streams: Int
    }

    /// A waiter gets streams: at least one, at most what it asked for.
    struct Lease {
        var waiter: Waiter
        var grants: [Grant]
    }

    enum LeaseResult {
        /// Use these streams now.
        case leased([Grant])
        /// The waiter was queued; it is handed a stream later, or failed.
        case queued
        case tooManyWaiters
        case shutdown
    }

    private enum ConnectionState: Hashable {
        case connecting
        case ready(maxStreams: Int)
        /// GOAWAY received: no new streams.
        case draining
    }

    private struct Connection {
        var id: ConnectionID
        var state: ConnectionState
        var inUse: Int
    }

    private let targetConnections: Int
    private let maxWaiters: Int
    private let streamCap: Int
    private var connections: [Connection] = []
    private var waiters = CircularBuffer<(id: Int, wanted: Int, waiter: Waiter)>()
    private var nextConnectionID = 0
    private var consecutiveFailures = 0
    private var isStarted = false
    private var isShutdown = false

    init(targetConnections: Int, maxWaiters: Int, streamCap: Int) {
        self.targetConnections = max(1, targetConnections)
        self.maxWaiters = maxWaiters
        self.streamCap = max(1, streamCap)
    }

    /// Connections that will take new streams (connecting or ready).
    private var liveConnections: Int {
        connections.count { $0.state != .draining }
    }

    var waiterCount: Int { waiters.count }

    /// Whether the connection has received the server's SETTINGS and is not going away.
    func isReady(_ id: ConnectionID) -> Bool {
        guard let connection = connections.first(where: { $0.id == id }), case .ready = connection.state else {
            return false
        }
        return true
    }

    /// Ready connections, streams in use over all connections, and callers waiting for one.
    var statistics: (openConnections: Int, streamsInUse: Int, waiters: Int) {
        let open = connections.count { if case .ready = $0.state { true } else { false } }
        return (open, connections.reduce(0) { $0 + $1.inUse }, waiters.count)
    }

    /// Streams in use on a connection (for tests and metrics).
    func streamsInUse(on id: ConnectionID) -> Int? {
        connections.first { $0.id == id }?.inUse
    }

    /// A caller wants `wanted` streams (at least one). The first call opens the pool's
    /// connections, spaced.
    mutating func lease(waiterID: Int, waiter: Waiter, wanted: Int = 1) -> (result: LeaseResult, connect: [Connect]) {
        guard !isShutdown else { return (.shutdown, []) }
        let connect = startIfNeeded()
        if waiters.isEmpty {
            let grants = take(upTo: wanted)
            if !grants.isEmpty { return (.leased(grants), connect) }
        }
        guard waiters.count < maxWaiters else { return (.tooManyWaiters, connect) }
        waiters.append((waiterID, max(1, wanted), waiter))
        return (.queued, connect)
    }

    /// The streams free now, up to `wanted`, when nobody waits for one; none otherwise (then
    /// call ``lease(waiterID:waiter:wanted:)``). The first call opens the pool's connections.
    mutating func leaseIfAvailable(wanted: Int = 1) -> (grants: [Grant], connect: [Connect]) {
        guard !isShutdown else { return ([], []) }
        let connect = startIfNeeded()
        guard waiters.isEmpty else { return ([], connect) }
        return (take(upTo: wanted), connect)
    }

    /// Streams finished (or were never used); their slots may go to waiters.
    mutating func release(_ id: ConnectionID, streams: Int = 1) -> [Lease] {
        guard let index = index(of: id) else { return [] }
        connections[index].inUse -= streams
        return serveWaiters()
    }

    /// Streams granted on a connection that could not be used (the pool does not know it);
    /// they count as free again without serving anyone now: the next release or connection
    /// serves the waiters.
    mutating func returnUnused(_ id: ConnectionID, streams: Int) {
        guard let index = index(of: id) else { return }
        connections[index].inUse -= streams
    }

    /// The connection finished TLS and received the server's first SETTINGS.
    mutating func connected(_ id: ConnectionID, maxStreams: Int) -> [Lease] {
        guard let index = index(of: id) else { return [] }
        consecutiveFailures = 0
        connections[index].state = .ready(maxStreams: min(max(maxStreams, 0), streamCap))
        return serveWaiters()
    }

    /// The server changed `SETTINGS_MAX_CONCURRENT_STREAMS`.
    mutating func maxStreamsChanged(_ id: ConnectionID, maxStreams: Int) -> [Lease] {
        guard let index = index(of: id), case .ready = connections[index].state else { return [] }
        connections[index].state = .ready(maxStreams: min(max(maxStreams, 0), streamCap))
        return serveWaiters()
    }

    /// GOAWAY received: the connection takes no new streams, and a replacement opens now.
    mutating func goingAway(_ id: ConnectionID) -> Connect? {
        guard let index = index(of: id), connections[index].state != .draining else { return nil }
        connections[index].state = .draining
        guard !isShutdown, liveConnections < targetConnections else { return nil }
        return Connect(id: makeConnection(), delay: .immediately)
    }

    /// A connection closed or failed to open. A replacement opens after a backoff; when nothing
    /// is left that could serve them, waiters fail.
    mutating func closed(_ id: ConnectionID) -> (connect: Connect?, failed: [Waiter]) {
        guard let index = index(of: id) else { return (nil, []) }
        let removed = connections.remove(at: index)
        guard !isShutdown else { return (nil, []) }
        var connect: Connect?
        if removed.state == .connecting {
            consecutiveFailures += 1
        }
        if liveConnections < targetConnections {
            let delay: ConnectDelay = consecutiveFailures == 0 ? .immediately : .backoff(consecutiveFailures)
            connect = Connect(id: makeConnection(), delay: delay)
        }
        var failed: [Waiter] = []
        if removed.state == .connecting, !connections.contains(where: { if case .ready = $0.state { true } else { false } }) {
            failed = waiters.map(\.waiter)
            waiters.removeAll()
        }
        return (connect, failed)
    }

    /// A waiter gave up (timeout or cancellation); returns it if it was still waiting.
    mutating func cancelWaiter(_ waiterID: Int) -> Waiter? {
        guard let position = waiters.firstIndex(where: { $0.id == waiterID }) else { return nil }
        return waiters.remove(at: position).waiter
    }

    /// Removes and returns the waiters `isExpired` selects (their deadline passed), keeping the
    /// order of the rest.
    mutating func removeWaiters(where isExpired: (Waiter) -> Bool) -> [Waiter] {
        guard waiters.contains(where: { isExpired($0.waiter) }) else { return [] }
        var expired: [Waiter] = []
        var kept = CircularBuffer<(id: Int, wanted: Int, waiter: Waiter)>(initialCapacity: waiters.count)
        for entry in waiters {
            if isExpired(entry.waiter) { expired.append(entry.waiter) } else { kept.append(entry) }
        }
        waiters = kept
        return expired
    }

    /// Stops everything: returns the waiters to fail and the connections to close.
    mutating func shutdown() -> (waiters: [Waiter], connections: [ConnectionID]) {
        isShutdown = true
        let failed = waiters.map(\.waiter)
        waiters.removeAll()
        return (failed, connections.map(\.id))
    }

    /// On first use, the pool's connections, spaced.
    private mutating func startIfNeeded() -> [Connect] {
        guard !isStarted else { return [] }
        isStarted = true
        return (0..<targetConnections).map { index in
            Connect(id: makeConnection(), delay: index == 0 ? .immediately : .spacing(index))
        }
    }

    private mutating func makeConnection() -> ConnectionID {
        let id = nextConnectionID
        nextConnectionID += 1
        connections.append(Connection(id: id, state: .connecting, inUse: 0))
        return id
    }

    private func index(of id: ConnectionID) -> Int? {
        connections.firstIndex { $0.id == id }
    }

    private func leastLoadedAvailable() -> Int? {
        var best: Int?
        for index in connections.indices {
            guard case .ready(let maxStreams) = connections[index].state,
                connections[index].inUse < maxStreams
            else { continue }
            if best == nil || connections[index].inUse < connections[best!].inUse {
                best = index
            }
        }
        return best
    }

    private mutating func serveWaiters() -> [Lease] {
        var leases: [Lease] = []
        while let first = waiters.first {
            let grants = take(upTo: first.wanted)
            guard !grants.isEmpty else { break }
            waiters.removeFirst()
            leases.append(Lease(waiter: first.waiter, grants: grants))
        }
        return leases
    }

    /// Takes up to `wanted` free streams, each on the least-loaded connection at the time.
    private mutating func take(upTo wanted: Int) -> [Grant] {
        var grants: [Grant] = []
        for _ in 0..<max(1, wanted) {
            guard let index = leastLoadedAvailable() else { break }
            connections[index].inUse += 1
            let id = connections[index].id
            if let known = grants.firstIndex(where: { $0.connection == id }) {
                grants[known].streams += 1
            } else {
                grants.append(Grant(connection: id, streams: 1))
            }
        }
        return grants
    }
}
