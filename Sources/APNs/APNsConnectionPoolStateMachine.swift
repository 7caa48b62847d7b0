import NIOCore

/// The shared mutable state of one connection pool: connections and their stream counts, and
/// the callers waiting for a stream. Every event returns what the pool must do; the pool does it
/// outside its lock.
///
/// Streams go to the ready connection with the fewest streams in use, up to what it may carry
/// (``APNsPoolSizing/streams(maxStreams:window:bytesPerRequest:)``: the server's
/// `SETTINGS_MAX_CONCURRENT_STREAMS`, the configured cap, and the requests whose DATA fits in its
/// send window). A caller may ask for several streams at once (a batch of notifications): it
/// gets those free now (all of the least-loaded connection first, then the next), or waits for the first to free up and then
/// gets every stream free at that moment, up to what it asked for. Waiters are served in order
/// and bounded in number.
///
/// A pool whose ``APNsPoolSizing`` allows a range sizes itself to the demand (streams in use and
/// waited for): it opens the connections the demand needs at once, in parallel, and gives one
/// back per ``tick()`` (one a second) once the highest demand of the last ticks needs fewer; a
/// connection given back takes no new streams and closes when its last stream ends.
///
/// A connection that left a request unanswered past its deadline is unproven: it takes no new
/// streams until it answers a PING (``unanswered(_:)``, ``answered(_:)``), and a pool that sizes
/// itself opens a replacement at once (a fixed pool keeps its size: its callers wait for the
/// PING's verdict, at most the PING timeout). Without that, the streams its timeouts free would make it the least-loaded
/// connection, and the next requests would go to a peer that may have gone silent, to wait out
/// another deadline there.
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
        /// GOAWAY received, or given back by the pool: no new streams.
        case draining
    }

    private struct Connection {
        var id: ConnectionID
        var state: ConnectionState
        var inUse: Int
        /// The most DATA the server lets it have in flight (its connection window).
        var window = APNsConnectionPoolStateMachine.protocolWindow
        /// Given back by the pool: it closes once its last stream ends.
        var retiring = false
        /// A request went unanswered past its deadline and a PING is out: no new streams
        /// until the PING is answered.
        var unproven = false
    }

    /// HTTP/2's initial connection window, and Apple's for good.
    static var protocolWindow: Int { 65_535 }

    /// The rule that sizes the pool.
    let sizing: APNsPoolSizing
    /// The connections the pool keeps (connecting or ready): the sizing's minimum at first.
    private(set) var targetConnections: Int
    private let maxWaiters: Int
    private var connections: [Connection] = []
    private var waiters = CircularBuffer<(id: Int, wanted: Int, waiter: Waiter)>()
    /// Streams the waiters ask for, together.
    private var waitingStreams = 0
    private var nextConnectionID = 0
    private var consecutiveFailures = 0
    private var isStarted = false
    private var isShutdown = false
    /// The largest stream limit and connection window a server advertised on this pool: what a
    /// new connection will carry once its first request is authenticated.
    private var knownMaxStreams: Int?
    private var knownWindow = APNsConnectionPoolStateMachine.protocolWindow
    /// The DATA bytes of a request (its payload), a running average of what callers send;
    /// 0 until the first lease says.
    private(set) var bytesPerRequest = 0
    /// The highest demand since the last tick, and of the ticks before it (newest last).
    private var peakDemand = 0
    private var demandHistory: [Int] = []
    /// The quickest answer since the last tick, and of the ticks before it (newest last): the
    /// round trip is the quickest of them.
    private var quickestAnswer: Duration?
    private var answerHistory: [Duration] = []
    /// Until an answer is measured, a third of the first connection's handshake (TCP, TLS
    /// and the server's SETTINGS take about three round trips).
    private var handshakeRoundTrip: Duration?
    /// Streams in use over all connections.
    private var streamsInUse = 0

    init(sizing: APNsPoolSizing, maxWaiters: Int) {
        self.sizing = sizing
        self.targetConnections = sizing.minimumConnections
        self.maxWaiters = maxWaiters
    }

    /// A fixed pool of `targetConnections`, each capped at `streamCap` streams.
    init(targetConnections: Int, maxWaiters: Int, streamCap: Int) {
        self.init(sizing: .fixed(connections: targetConnections, streamCap: streamCap), maxWaiters: maxWaiters)
    }

    /// Connections that will take new streams (connecting, or ready and not unproven).
    private var liveConnections: Int {
        connections.count { $0.state != .draining && !$0.unproven }
    }

    private var connectingConnections: Int {
        connections.count { $0.state == .connecting }
    }

    /// The round trip the pool plans with: the quickest answer of the last ticks (a third of
    /// the first handshake before any answer); `nil` before either.
    var roundTrip: Duration? {
        (answerHistory + [quickestAnswer].compactMap { $0 }).min() ?? handshakeRoundTrip
    }

    /// Streams wanted: in use, and asked for by the callers waiting.
    var demand: Int { streamsInUse + waitingStreams }

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
        return (open, streamsInUse, waiters.count)
    }

    /// The streams a ready connection carries at most now.
    func streamLimit(on id: ConnectionID) -> Int? {
        guard let connection = connections.first(where: { $0.id == id }) else { return nil }
        return limit(of: connection)
    }

    /// Streams in use on a connection (for tests and metrics).
    func streamsInUse(on id: ConnectionID) -> Int? {
        connections.first { $0.id == id }?.inUse
    }

    /// A caller wants `wanted` streams (at least one) for requests of `bytes` DATA bytes each
    /// (0: unknown). The first call opens the pool's connections, spaced; on a pool that sizes
    /// itself, a demand the connections cannot carry opens more at once.
    mutating func lease(waiterID: Int, waiter: Waiter, wanted: Int = 1, bytes: Int = 0) -> (result: LeaseResult, connect: [Connect]) {
        guard !isShutdown else { return (.shutdown, []) }
        observe(bytes: bytes)
        var connect = startIfNeeded()
        if waiters.isEmpty {
            let grants = take(upTo: wanted)
            if !grants.isEmpty { return (.leased(grants), connect + grow()) }
        }
        guard waiters.count < maxWaiters else { return (.tooManyWaiters, connect) }
        waiters.append((waiterID, max(1, wanted), waiter))
        waitingStreams += max(1, wanted)
        connect += grow()
        return (.queued, connect)
    }

    /// The streams free now, up to `wanted`, when nobody waits for one; none otherwise (then
    /// call ``lease(waiterID:waiter:wanted:bytes:)``). The first call opens the pool's connections.
    mutating func leaseIfAvailable(wanted: Int = 1, bytes: Int = 0) -> (grants: [Grant], connect: [Connect]) {
        guard !isShutdown else { return ([], []) }
        observe(bytes: bytes)
        let connect = startIfNeeded()
        guard waiters.isEmpty else { return ([], connect) }
        let grants = take(upTo: wanted)
        return (grants, grants.isEmpty ? connect : connect + grow())
    }

    /// What the pool does when streams end: serve waiters, and close a connection given back
    /// once its last stream ended.
    struct Release {
        var leases: [Lease]
        var close: ConnectionID?
        var connect: [Connect]
    }

    /// Streams finished (or were never used); their slots may go to waiters.
    mutating func release(_ id: ConnectionID, streams: Int = 1) -> [Lease] {
        releasing(id, streams: streams).leases
    }

    /// ``release(_:streams:)``, with how long the quickest answer among them took, and the
    /// connection to close when it was given back and is idle now.
    mutating func releasing(_ id: ConnectionID, streams: Int = 1, quickest: Duration? = nil) -> Release {
        guard let index = index(of: id) else { return Release(leases: [], close: nil, connect: []) }
        connections[index].inUse -= streams
        streamsInUse -= streams
        if let quickest {
            quickestAnswer = min(quickestAnswer ?? quickest, quickest)
        }
        let close = connections[index].retiring && connections[index].inUse <= 0 ? id : nil
        // With callers waiting, a first measured round trip may call for more connections.
        let connect = waitingStreams > 0 ? grow() : []
        return Release(leases: serveWaiters(), close: close, connect: connect)
    }

    /// Streams granted on a connection that could not be used (the pool does not know it);
    /// they count as free again without serving anyone now: the next release or connection
    /// serves the waiters.
    mutating func returnUnused(_ id: ConnectionID, streams: Int) {
        guard let index = index(of: id) else { return }
        connections[index].inUse -= streams
        streamsInUse -= streams
    }

    /// The connection finished TLS and received the server's first SETTINGS, with `window`
    /// bytes of connection window.
    mutating func connected(_ id: ConnectionID, maxStreams: Int, window: Int = APNsConnectionPoolStateMachine.protocolWindow) -> [Lease] {
        connecting(id, maxStreams: maxStreams, window: window).leases
    }

    /// ``connected(_:maxStreams:window:)``, with how long the connection took to open, and the
    /// connections the demand now calls for.
    mutating func connecting(
        _ id: ConnectionID, maxStreams: Int, window: Int, handshake: Duration? = nil
    ) -> (leases: [Lease], connect: [Connect]) {
        guard let index = index(of: id), connections[index].state == .connecting else { return ([], []) }
        consecutiveFailures = 0
        if handshakeRoundTrip == nil, let handshake { handshakeRoundTrip = handshake / 3 }
        connections[index].state = .ready(maxStreams: max(maxStreams, 0))
        connections[index].window = window
        learn(maxStreams: maxStreams, window: window)
        // Sized on the demand before it is served: a waiter served in part leaves the queue,
        // and its caller asks again for the rest only later.
        let connect = grow()
        return (serveWaiters(), connect)
    }

    /// The server changed `SETTINGS_MAX_CONCURRENT_STREAMS`.
    mutating func maxStreamsChanged(_ id: ConnectionID, maxStreams: Int) -> [Lease] {
        streamLimitChanged(id, maxStreams: maxStreams).leases
    }

    /// ``maxStreamsChanged(_:maxStreams:)``, and the connections the demand now calls for (a
    /// first authenticated request tells what a connection carries).
    mutating func streamLimitChanged(_ id: ConnectionID, maxStreams: Int) -> (leases: [Lease], connect: [Connect]) {
        guard let index = index(of: id), case .ready = connections[index].state else { return ([], []) }
        connections[index].state = .ready(maxStreams: max(maxStreams, 0))
        learn(maxStreams: maxStreams, window: connections[index].window)
        let connect = grow()
        return (serveWaiters(), connect)
    }

    /// The server raised the connection's window.
    mutating func windowGrew(_ id: ConnectionID, window: Int) -> [Lease] {
        guard let index = index(of: id) else { return [] }
        connections[index].window = max(connections[index].window, window)
        learn(maxStreams: nil, window: window)
        return serveWaiters()
    }

    /// Once a second: gives a connection back when the highest demand of the last
    /// ``APNsPoolSizing/shrinkWindowTicks`` ticks needs fewer than the pool keeps. Answers the
    /// connection to close now (given back and idle); one still carrying streams closes when
    /// they end (``releasing(_:streams:)``).
    mutating func tick() -> ConnectionID? {
        demandHistory.append(sizing.plannedStreams(demand: max(peakDemand, demand), roundTrip: roundTrip))
        if demandHistory.count > sizing.shrinkWindowTicks { demandHistory.removeFirst(demandHistory.count - sizing.shrinkWindowTicks) }
        peakDemand = demand
        if let quickest = quickestAnswer {
            answerHistory.append(quickest)
            if answerHistory.count > sizing.shrinkWindowTicks { answerHistory.removeFirst(answerHistory.count - sizing.shrinkWindowTicks) }
            quickestAnswer = nil
        }
        guard !sizing.isFixed, !isShutdown, isStarted, demandHistory.count >= sizing.shrinkWindowTicks,
            connectingConnections == 0
        else { return nil }
        let needed = sizing.connections(forStreams: demandHistory.max() ?? 0, perConnection: plannedStreamsPerConnection)
        if needed < targetConnections { targetConnections = max(needed, targetConnections - 1) }
        // More live connections than planned: the target fell, or a connection replaced while
        // unproven answered its PING after all.
        guard liveConnections > targetConnections else { return nil }
        // The ready connection with the fewest streams goes.
        var victim: Int?
        for index in connections.indices {
            guard case .ready = connections[index].state else { continue }
            if victim == nil || connections[index].inUse < connections[victim!].inUse { victim = index }
        }
        guard let victim else { return nil }
        connections[victim].state = .draining
        connections[victim].retiring = true
        return connections[victim].inUse <= 0 ? connections[victim].id : nil
    }

    /// A request on the connection went unanswered past its deadline, and the connection is
    /// proving it is alive (a PING is out): it takes no new streams until ``answered(_:)``. A
    /// pool that sizes itself opens a replacement now (it no longer counts this one); a fixed
    /// pool opens none.
    mutating func unanswered(_ id: ConnectionID) -> [Connect] {
        guard let index = index(of: id), case .ready = connections[index].state, !connections[index].unproven else { return [] }
        connections[index].unproven = true
        return grow()
    }

    /// The connection answered its PING: it takes new streams again. The pool may now keep a
    /// connection more than it plans; ``tick()`` gives one back when the demand allows.
    mutating func answered(_ id: ConnectionID) -> [Lease] {
        guard let index = index(of: id), connections[index].unproven else { return [] }
        connections[index].unproven = false
        return serveWaiters()
    }

    /// GOAWAY received: the connection takes no new streams, and a replacement opens now.
    mutating func goingAway(_ id: ConnectionID) -> Connect? {
        guard let index = index(of: id), connections[index].state != .draining else { return nil }
        connections[index].state = .draining
        connections[index].retiring = false
        guard !isShutdown, liveConnections < targetConnections else { return nil }
        return Connect(id: makeConnection(), delay: .immediately)
    }

    /// A connection closed or failed to open. A replacement opens after a backoff; when nothing
    /// is left that could serve them, waiters fail.
    mutating func closed(_ id: ConnectionID) -> (connect: Connect?, failed: [Waiter]) {
        guard let index = index(of: id) else { return (nil, []) }
        let removed = connections.remove(at: index)
        streamsInUse -= removed.inUse
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
        let removed = waiters.remove(at: position)
        waitingStreams -= removed.wanted
        return removed.waiter
    }

    /// Removes and returns the waiters `isExpired` selects (their deadline passed), keeping the
    /// order of the rest.
    mutating func removeWaiters(where isExpired: (Waiter) -> Bool) -> [Waiter] {
        guard waiters.contains(where: { isExpired($0.waiter) }) else { return [] }
        var expired: [Waiter] = []
        var kept = CircularBuffer<(id: Int, wanted: Int, waiter: Waiter)>(initialCapacity: waiters.count)
        for entry in waiters {
            if isExpired(entry.waiter) {
                expired.append(entry.waiter)
                waitingStreams -= entry.wanted
            } else {
                kept.append(entry)
            }
        }
        waiters = kept
        return expired
    }

    /// Stops everything: returns the waiters to fail and the connections to close.
    mutating func shutdown() -> (waiters: [Waiter], connections: [ConnectionID]) {
        isShutdown = true
        let failed = waiters.map(\.waiter)
        waiters.removeAll()
        waitingStreams = 0
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

    /// The streams a connection of this pool will carry once ready and authenticated: what the
    /// sizing plans with.
    private var plannedStreamsPerConnection: Int {
        sizing.streams(maxStreams: knownMaxStreams ?? sizing.streamCap, window: knownWindow, bytesPerRequest: bytesPerRequest)
    }

    /// What a server said of its connections: the largest stream limit and window so far. A
    /// limit of one stream says nothing: Apple's until a connection's first authenticated
    /// request, and after a refusal until the next success.
    private mutating func learn(maxStreams: Int?, window: Int) {
        if let maxStreams, maxStreams > 1 { knownMaxStreams = max(knownMaxStreams ?? 0, maxStreams) }
        knownWindow = max(knownWindow, window)
    }

    /// A running average of the callers' request sizes (an eighth of each new one).
    private mutating func observe(bytes: Int) {
        guard bytes > 0 else { return }
        bytesPerRequest = bytesPerRequest == 0 ? bytes : bytesPerRequest + (bytes - bytesPerRequest) / 8
    }

    /// A pool that sizes itself: the connections the demand needs now, opened at once (at most
    /// ``APNsPoolSizing/maximumConnecting`` being opened at a time). Nothing grows before a first
    /// connection is ready: until its handshake has told the distance, the pool would be sized
    /// on a guess. Until a server has said how many streams a connection carries (Apple: one
    /// until the first authenticated request), the cap is the estimate.
    private mutating func grow() -> [Connect] {
        let current = demand
        peakDemand = max(peakDemand, current)
        guard !sizing.isFixed, isStarted, !isShutdown, knownMaxStreams != nil || handshakeRoundTrip != nil else { return [] }
        let planned = sizing.plannedStreams(demand: current, roundTrip: roundTrip)
        targetConnections = max(targetConnections, sizing.connections(forStreams: planned, perConnection: plannedStreamsPerConnection))
        var connect: [Connect] = []
        var connecting = connectingConnections
        while liveConnections < targetConnections, connecting < sizing.maximumConnecting {
            connect.append(Connect(id: makeConnection(), delay: .immediately))
            connecting += 1
        }
        return connect
    }

    /// The streams `connection` carries at most now; `nil` unless it is ready and not unproven.
    private func limit(of connection: Connection) -> Int? {
        guard case .ready(let maxStreams) = connection.state, !connection.unproven else { return nil }
        return sizing.streams(maxStreams: maxStreams, window: connection.window, bytesPerRequest: bytesPerRequest)
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
            guard let limit = limit(of: connections[index]), connections[index].inUse < limit else { continue }
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
            waitingStreams -= first.wanted
            leases.append(Lease(waiter: first.waiter, grants: grants))
        }
        return leases
    }

    /// Takes up to `wanted` free streams: every free stream of the least-loaded connection,
    /// then of the next least-loaded, and so on. One caller's streams stay on few connections,
    /// so its requests leave in few writes and their answers come back in few reads (at a
    /// distance a pool holds dozens of connections, and a stream's CPU is mostly its
    /// connection's per-write and per-read cost); successive callers still spread over the
    /// connections, each starting on the least-loaded.
    private mutating func take(upTo wanted: Int) -> [Grant] {
        var grants: [Grant] = []
        var remaining = max(1, wanted)
        while remaining > 0, let index = leastLoadedAvailable(), let limit = limit(of: connections[index]) {
            let count = min(limit - connections[index].inUse, remaining)
            connections[index].inUse += count
            streamsInUse += count
            remaining -= count
            grants.append(Grant(connection: connections[index].id, streams: count))
        }
        return grants
    }
}
