import APNsCore
import Testing

@testable import APNs

/// The pool's decisions, without connections.
@Suite("Connection pool state machine")
struct APNsConnectionPoolStateMachineTests {
    typealias Machine = APNsConnectionPoolStateMachine<String>

    @Test("the first lease opens every connection, spaced, and queues the caller")
    func firstLease() {
        var machine = Machine(targetConnections: 3, maxWaiters: 10, streamCap: 100)
        let (result, connects) = machine.lease(waiterID: 1, waiter: "a")
        guard case .queued = result else {
            Issue.record("expected queued, got \(result)")
            return
        }
        #expect(connects == [.init(id: 0, delay: .immediately), .init(id: 1, delay: .spacing(1)), .init(id: 2, delay: .spacing(2))])
        let leases = machine.connected(0, maxStreams: 1)
        #expect(leases.map(\.waiter) == ["a"])
        #expect(leases.map(\.grants) == [[.init(connection: 0, streams: 1)]])
    }

    @Test("expired waiters leave the queue; the rest keep their order and are served")
    func expiredWaiters() {
        var machine = Machine(targetConnections: 1, maxWaiters: 10, streamCap: 100)
        for (id, name) in ["a", "late-b", "c", "late-d"].enumerated() {
            #expect(isQueued(machine.lease(waiterID: id, waiter: name).result))
        }
        #expect(machine.removeWaiters { $0.hasPrefix("late") } == ["late-b", "late-d"])
        #expect(machine.removeWaiters { $0.hasPrefix("late") } == [])
        #expect(machine.waiterCount == 2)
        #expect(machine.connected(0, maxStreams: 10).map(\.waiter) == ["a", "c"])
    }

    @Test("streams stop at SETTINGS_MAX_CONCURRENT_STREAMS and follow its changes")
    func followsMaxStreams() {
        var machine = Machine(targetConnections: 1, maxWaiters: 10, streamCap: 1000)
        _ = machine.lease(waiterID: 1, waiter: "a")
        #expect(machine.connected(0, maxStreams: 1).map(\.waiter) == ["a"])
        #expect(isQueued(machine.lease(waiterID: 2, waiter: "b").result))
        #expect(isQueued(machine.lease(waiterID: 3, waiter: "c").result))
        // The server raises the limit after the first authenticated request.
        #expect(machine.maxStreamsChanged(0, maxStreams: 3).map(\.waiter) == ["b", "c"])
        #expect(machine.streamsInUse(on: 0) == 3)
        #expect(machine.maxStreamsChanged(0, maxStreams: 1).isEmpty)
        #expect(isQueued(machine.lease(waiterID: 4, waiter: "d").result))
        // Lowered to 1 with 3 in use: releases do not hand out streams until below the limit.
        #expect(machine.release(0).isEmpty)
        #expect(machine.release(0).isEmpty)
        #expect(machine.release(0).map(\.waiter) == ["d"])
    }

    @Test("the configured cap bounds what the server allows")
    func cap() {
        var machine = Machine(targetConnections: 1, maxWaiters: 10, streamCap: 2)
        _ = machine.lease(waiterID: 1, waiter: "a")
        _ = machine.connected(0, maxStreams: 1000)
        #expect(isLeased(machine.lease(waiterID: 2, waiter: "b").result))
        #expect(isQueued(machine.lease(waiterID: 3, waiter: "c").result))
    }

    @Test("new work goes to the least-loaded connection")
    func leastLoaded() {
        var machine = Machine(targetConnections: 2, maxWaiters: 10, streamCap: 100)
        _ = machine.lease(waiterID: 1, waiter: "a")
        _ = machine.connected(0, maxStreams: 100)
        _ = machine.connected(1, maxStreams: 100)
        var counts = [0: 0, 1: 0]
        for waiter in 2..<12 {
            guard let id = leasedConnection(machine.lease(waiterID: waiter, waiter: "w").result) else {
                Issue.record("expected a lease")
                return
            }
            counts[id, default: 0] += 1
        }
        #expect(machine.streamsInUse(on: 0) == 6)
        #expect(machine.streamsInUse(on: 1) == 5)
        _ = machine.release(0)
        _ = machine.release(0)
        #expect(leasedConnection(machine.lease(waiterID: 20, waiter: "x").result) == 0)
    }

    @Test("the fast path starts the pool, leases only when nobody waits")
    func fastPath() {
        var machine = Machine(targetConnections: 2, maxWaiters: 10, streamCap: 100)
        let first = machine.leaseIfAvailable()
        #expect(first.grants.isEmpty)
        #expect(first.connect.count == 2)
        #expect(isQueued(machine.lease(waiterID: 1, waiter: "a").result))
        #expect(machine.connected(0, maxStreams: 1).map(\.waiter) == ["a"])
        #expect(machine.leaseIfAvailable().grants.isEmpty)
        #expect(isQueued(machine.lease(waiterID: 2, waiter: "b").result))
        _ = machine.connected(1, maxStreams: 5)
        let next = machine.leaseIfAvailable()
        #expect(next.grants == [Machine.Grant(connection: 1, streams: 1)])
        #expect(next.connect.isEmpty)
    }

    @Test("a lease of many streams takes those free now: every free stream of the least-loaded connection, then of the next")
    func manyStreamsNow() {
        var machine = Machine(targetConnections: 2, maxWaiters: 10, streamCap: 100)
        _ = machine.leaseIfAvailable()
        _ = machine.connected(0, maxStreams: 4)
        _ = machine.connected(1, maxStreams: 3)
        _ = machine.leaseIfAvailable()  // one stream on connection 0
        let (grants, connect) = machine.leaseIfAvailable(wanted: 5)
        #expect(connect.isEmpty)
        #expect(Set(grants) == [Machine.Grant(connection: 0, streams: 2), Machine.Grant(connection: 1, streams: 3)])
        #expect(machine.streamsInUse(on: 0) == 3 && machine.streamsInUse(on: 1) == 3)
        // One stream is left; a lease of 10 gets it.
        let (rest, _) = machine.leaseIfAvailable(wanted: 10)
        #expect(rest == [Machine.Grant(connection: 0, streams: 1)])
        #expect(machine.leaseIfAvailable(wanted: 10).grants.isEmpty)
    }

    @Test("a waiter for many streams gets every stream free when it is served, at most what it asked for; waiters after it wait their turn")
    func manyStreamsWaiting() {
        var machine = Machine(targetConnections: 1, maxWaiters: 10, streamCap: 100)
        _ = machine.leaseIfAvailable()
        _ = machine.connected(0, maxStreams: 4)
        _ = machine.leaseIfAvailable(wanted: 4)
        #expect(isQueued(machine.lease(waiterID: 1, waiter: "batch", wanted: 3).result))
        #expect(isQueued(machine.lease(waiterID: 2, waiter: "single").result))
        // Streams free up one at a time: the batch is served with the first.
        let first = machine.release(0)
        #expect(first.map(\.waiter) == ["batch"] && first[0].grants == [Machine.Grant(connection: 0, streams: 1)])
        // Two free at once: the single waiter gets one, the other stays free.
        let both = machine.release(0, streams: 2)
        #expect(both.map(\.waiter) == ["single"] && both[0].grants == [Machine.Grant(connection: 0, streams: 1)])
        #expect(machine.statistics.streamsInUse == 3)
        // The last free stream goes to a new lease at once.
        #expect(leasedConnection(machine.lease(waiterID: 3, waiter: "late", wanted: 5).result) == 0)
        #expect(isQueued(machine.lease(waiterID: 4, waiter: "later").result))
        // Streams granted but never used count as free again; they serve nobody by themselves.
        machine.returnUnused(0, streams: 1)
        #expect(machine.statistics.streamsInUse == 3 && machine.waiterCount == 1)
        #expect(machine.release(0).map(\.waiter) == ["later"])
    }

    @Test("waiters are bounded")
    func boundedWaiters() {
        var machine = Machine(targetConnections: 1, maxWaiters: 2, streamCap: 100)
        #expect(isQueued(machine.lease(waiterID: 1, waiter: "a").result))
        #expect(isQueued(machine.lease(waiterID: 2, waiter: "b").result))
        guard case .tooManyWaiters = machine.lease(waiterID: 3, waiter: "c").result else {
            Issue.record("expected tooManyWaiters")
            return
        }
        #expect(machine.waiterCount == 2)
    }

    @Test("a cancelled waiter is returned once and never leased")
    func cancel() {
        var machine = Machine(targetConnections: 1, maxWaiters: 10, streamCap: 100)
        _ = machine.lease(waiterID: 1, waiter: "a")
        _ = machine.lease(waiterID: 2, waiter: "b")
        #expect(machine.cancelWaiter(1) == "a")
        #expect(machine.cancelWaiter(1) == nil)
        #expect(machine.connected(0, maxStreams: 10).map(\.waiter) == ["b"])
    }

    @Test("GOAWAY drains the connection and opens a replacement at once")
    func goAway() {
        var machine = Machine(targetConnections: 1, maxWaiters: 10, streamCap: 100)
        _ = machine.lease(waiterID: 1, waiter: "a")
        _ = machine.connected(0, maxStreams: 10)
        #expect(machine.goingAway(0) == .init(id: 1, delay: .immediately))
        #expect(machine.goingAway(0) == nil)
        #expect(isQueued(machine.lease(waiterID: 2, waiter: "b").result))
        // The drained connection closing does not open another one.
        #expect(machine.closed(0).connect == nil)
        #expect(machine.connected(1, maxStreams: 10).map(\.waiter) == ["b"])
    }

    @Test("an unproven connection (a request unanswered) takes no new streams; its PING answered, it does; a fixed pool keeps its size")
    func unansweredConnection() {
        var machine = Machine(targetConnections: 1, maxWaiters: 10, streamCap: 100)
        _ = machine.lease(waiterID: 1, waiter: "a")
        #expect(machine.connected(0, maxStreams: 10).map(\.waiter) == ["a"])
        #expect(machine.unanswered(0).isEmpty, "a fixed pool opens no replacement")
        #expect(machine.streamLimit(on: 0) == nil)
        // The timed-out stream ends: its slot serves nobody here.
        #expect(machine.release(0).isEmpty)
        #expect(isQueued(machine.lease(waiterID: 2, waiter: "b").result))
        #expect(machine.leaseIfAvailable().grants.isEmpty)
        #expect(machine.answered(0).map(\.waiter) == ["b"])
        #expect(machine.answered(0).isEmpty)
        #expect(machine.streamLimit(on: 0) == 10)
        #expect(machine.leaseIfAvailable(wanted: 20).grants == [.init(connection: 0, streams: 9)])
    }

    @Test("a sized pool replaces an unproven connection at once, not twice when it fails its PING; the ticks give a surplus back")
    func unansweredInASizedPool() {
        var machine = Machine(sizing: Self.sizing, maxWaiters: 100)
        _ = machine.lease(waiterID: 1, waiter: "a", wanted: 10, bytes: 100)
        _ = machine.connecting(0, maxStreams: 1_000, window: 1 << 20)
        #expect(machine.targetConnections == 1)
        #expect(machine.unanswered(0) == [.init(id: 1, delay: .immediately)])
        #expect(machine.unanswered(0).isEmpty)
        #expect(machine.goingAway(0) == nil, "the replacement is already opening")
        #expect(machine.closed(0).connect == nil)
        #expect(machine.connecting(1, maxStreams: 1_000, window: 1 << 20).connect.isEmpty)
        // Connection 1 goes quiet and answers its PING: one connection more than planned until
        // the ticks give one back.
        #expect(machine.unanswered(1) == [.init(id: 2, delay: .immediately)])
        _ = machine.connecting(2, maxStreams: 1_000, window: 1 << 20)
        #expect(machine.answered(1).isEmpty)
        #expect(machine.statistics.openConnections == 2)
        let given = (0..<3).compactMap { _ in machine.tick() }
        #expect(given.count == 1)
        #expect(machine.statistics.openConnections == 1)
        // A late event for a connection the pool no longer has changes nothing.
        #expect(machine.unanswered(0).isEmpty)
        #expect(machine.answered(0).isEmpty)
    }

    @Test("failed connects back off exponentially and fail waiters; success resets the count")
    func backoff() {
        var machine = Machine(targetConnections: 1, maxWaiters: 10, streamCap: 100)
        _ = machine.lease(waiterID: 1, waiter: "a")
        let first = machine.closed(0)
        #expect(first.connect == .init(id: 1, delay: .backoff(1)))
        #expect(first.failed == ["a"])
        #expect(machine.closed(1).connect == .init(id: 2, delay: .backoff(2)))
        _ = machine.connected(2, maxStreams: 10)
        // A ready connection that drops is replaced at once.
        #expect(machine.closed(2).connect == .init(id: 3, delay: .immediately))
    }

    @Test("a dropped connection's late releases are ignored")
    func lateRelease() {
        var machine = Machine(targetConnections: 1, maxWaiters: 10, streamCap: 100)
        _ = machine.lease(waiterID: 1, waiter: "a")
        _ = machine.connected(0, maxStreams: 10)
        _ = machine.closed(0)
        #expect(machine.release(0).isEmpty)
        #expect(machine.streamsInUse(on: 0) == nil)
    }

    @Test("shutdown fails waiters, closes connections, refuses leases")
    func shutdown() {
        var machine = Machine(targetConnections: 2, maxWaiters: 10, streamCap: 100)
        _ = machine.lease(waiterID: 1, waiter: "a")
        let (waiters, connections) = machine.shutdown()
        #expect(waiters == ["a"])
        #expect(connections == [0, 1])
        guard case .shutdown = machine.lease(waiterID: 2, waiter: "b").result else {
            Issue.record("expected shutdown")
            return
        }
        #expect(machine.closed(0).connect == nil)
    }

    // MARK: A pool that sizes itself

    /// Apple at a distance: 1,000 streams per connection once authenticated, 65,535-byte windows.
    static let sizing = APNsPoolSizing(
        minimumConnections: 1, maximumConnections: 20, streamCap: 1_000, utilization: 1, maximumConnecting: 4, shrinkWindowTicks: 3)

    @Test("a pool that sizes itself opens one connection, then, once a server said what a connection carries, what the demand needs, at once")
    func growsToTheDemand() {
        var machine = Machine(sizing: Self.sizing, maxWaiters: 100)
        // 2,000 notifications of 650 bytes wanted: 100 fit in a 65,535-byte window per connection.
        let first = machine.lease(waiterID: 1, waiter: "a", wanted: 2_000, bytes: 650)
        #expect(isQueued(first.result))
        #expect(first.connect == [.init(id: 0, delay: .immediately)], "one connection until a server says what it carries")
        // Apple advertises one stream until the connection's first authenticated request: the
        // waiter gets it, and the client asks again for the rest.
        let ready = machine.connecting(0, maxStreams: 1, window: 65_535)
        #expect(ready.leases.map(\.grants) == [[.init(connection: 0, streams: 1)]])
        #expect(ready.connect.isEmpty)
        #expect(machine.lease(waiterID: 2, waiter: "b", wanted: 1_999, bytes: 650).connect.isEmpty, "one stream says nothing yet")
        // The first request authenticated: 1,000 streams, 100 of them by the window; 20
        // connections for 2,000 streams, 4 opened at a time.
        let raised = machine.streamLimitChanged(0, maxStreams: 1_000)
        #expect(raised.leases.map(\.waiter) == ["b"])
        #expect(raised.connect == (1...4).map { .init(id: $0, delay: .immediately) })
        #expect(machine.targetConnections == 20)
        // Each one ready opens the next.
        #expect(machine.connecting(1, maxStreams: 1, window: 65_535).connect == [.init(id: 5, delay: .immediately)])
        _ = machine.maxStreamsChanged(1, maxStreams: 1_000)
        #expect(machine.streamLimit(on: 1) == 100, "the window, not the server's 1,000, bounds a connection")
    }

    @Test("a connection carries no more streams than requests fit in its window; a larger window raises it")
    func windowBoundsStreams() {
        var machine = Machine(sizing: .fixed(connections: 1, streamCap: 1_000), maxWaiters: 100)
        _ = machine.lease(waiterID: 1, waiter: "a", wanted: 1, bytes: 2_000)
        _ = machine.connecting(0, maxStreams: 1_000, window: 65_535)
        #expect(machine.streamLimit(on: 0) == 32)
        _ = machine.windowGrew(0, window: 1 << 20)
        #expect(machine.streamLimit(on: 0) == 524)
        #expect(machine.targetConnections == 1, "a fixed pool never grows")
    }

    @Test("the demand of the last ticks decides when a connection goes back; one per tick; a busy one closes when its last stream ends")
    func shrinksAfterTheDemand() {
        var machine = Machine(sizing: Self.sizing, maxWaiters: 100)
        _ = machine.lease(waiterID: 1, waiter: "a", wanted: 300)
        let first = machine.connecting(0, maxStreams: 100, window: 1 << 20)
        #expect(first.connect.map(\.id) == [1, 2])
        for id in [1, 2] { _ = machine.connecting(id, maxStreams: 100, window: 1 << 20) }
        // The waiter got connection 0's 100 streams; the client takes the other 200 now.
        #expect(machine.leaseIfAvailable(wanted: 200).grants.reduce(0) { $0 + $1.streams } == 200)
        #expect(machine.targetConnections == 3)
        // The demand falls to 50 streams, all on connection 0 …
        for _ in 0..<100 { _ = machine.release(1) }
        for _ in 0..<100 { _ = machine.release(2) }
        for _ in 0..<50 { _ = machine.release(0) }
        #expect(machine.demand == 50)
        // … but the window remembers the peak for three ticks.
        #expect(machine.tick() == nil)
        #expect(machine.tick() == nil)
        #expect(machine.tick() == nil)
        // Then one idle connection goes per tick, closed at once.
        let gone = machine.tick()
        #expect(gone == 1 || gone == 2)
        #expect(machine.targetConnections == 2)
        let next = machine.tick()
        #expect((next == 1 || next == 2) && next != gone)
        #expect(machine.tick() == nil, "the minimum stays")
        #expect(machine.targetConnections == 1)
        #expect(machine.streamLimit(on: 0) == 100)
    }

    @Test("a connection given back while it carries streams closes when the last one ends, and takes no new ones")
    func retiredConnectionDrains() {
        let sizing = APNsPoolSizing(minimumConnections: 1, maximumConnections: 2, streamCap: 10, utilization: 1, shrinkWindowTicks: 1)
        var machine = Machine(sizing: sizing, maxWaiters: 100)
        _ = machine.lease(waiterID: 1, waiter: "a", wanted: 20)
        #expect(machine.connecting(0, maxStreams: 10, window: 1 << 20).connect.map(\.id) == [1])
        _ = machine.connecting(1, maxStreams: 10, window: 1 << 20)
        _ = machine.leaseIfAvailable(wanted: 10)
        #expect(machine.demand == 20)
        for _ in 0..<9 { _ = machine.release(0) }
        for _ in 0..<9 { _ = machine.release(1) }
        #expect(machine.tick() == nil, "the tick's window holds the peak of 20")
        // Two streams in use, one on each: one connection suffices; the one given back is busy.
        #expect(machine.tick() == nil)
        #expect(machine.targetConnections == 1)
        let busy = try! #require([0, 1].first { machine.streamLimit(on: $0) == nil })
        #expect(machine.releasing(busy).close == busy)
        #expect(isLeased(machine.lease(waiterID: 2, waiter: "b").result))
    }

    private func isQueued(_ result: Machine.LeaseResult) -> Bool {
        if case .queued = result { true } else { false }
    }

    private func isLeased(_ result: Machine.LeaseResult) -> Bool {
        leasedConnection(result) != nil
    }

    /// The connection of a lease of one stream.
    private func leasedConnection(_ result: Machine.LeaseResult) -> Int? {
        guard case .leased(let grants) = result, grants.count == 1, grants[0].streams == 1 else { return nil }
        return grants[0].connection
    }
}

@Suite("Pool statistics")
struct PoolStatisticsTests {
    @Test("figures of several pools and clients are summed per environment, sandbox after production")
    func summedPerEnvironment() {
        typealias Figures = APNsClient.PoolStatistics
        let summed = Figures.summedByEnvironment([
            Figures(environment: .sandbox, openConnections: 2, streamsInFlight: 150, waiters: 0),
            Figures(environment: .production, openConnections: 4, streamsInFlight: 400, waiters: 12),
            Figures(environment: .sandbox, openConnections: 1, streamsInFlight: 3, waiters: 5),
        ])
        #expect(
            summed == [
                Figures(environment: .production, openConnections: 4, streamsInFlight: 400, waiters: 12),
                Figures(environment: .sandbox, openConnections: 3, streamsInFlight: 153, waiters: 5),
            ])
        #expect(Figures.summedByEnvironment([]).isEmpty)
    }
}

/// The sizing rule on its own (``APNsPoolSizing``).
@Suite("Pool sizing")
struct APNsPoolSizingTests {
    @Test("a connection carries the server's limit, the cap, and the requests its window holds; at least one")
    func streamsPerConnection() {
        let sizing = APNsPoolSizing(streamCap: 500)
        #expect(sizing.streams(maxStreams: 1_000, window: 1 << 20, bytesPerRequest: 300) == 500)
        #expect(sizing.streams(maxStreams: 100, window: 1 << 20, bytesPerRequest: 300) == 100)
        #expect(sizing.streams(maxStreams: 1_000, window: 65_535, bytesPerRequest: 300) == 218)
        #expect(sizing.streams(maxStreams: 1_000, window: 65_535, bytesPerRequest: 2_048) == 31)
        #expect(sizing.streams(maxStreams: 1_000, window: 65_535, bytesPerRequest: 0) == 500, "an unknown size leaves the window out")
        #expect(
            APNsPoolSizing(streamCap: 5_000).streams(maxStreams: 5_000, window: 65_535, bytesPerRequest: 10) == 1_023,
            "tiny requests count as 64 bytes")
        #expect(sizing.streams(maxStreams: 0, window: 100, bytesPerRequest: 5_000) == 1)
    }

    @Test("Little's law at Apple's distance: the connections a demand needs, at the planned utilization, within the bounds")
    func connectionsForADemand() {
        let sizing = APNsPoolSizing(minimumConnections: 2, maximumConnections: 64, utilization: 0.8)
        // 20,000/s at 200 ms is 4,000 streams; 218 per connection (300-byte payloads): 23.
        #expect(sizing.connections(forStreams: 4_000, perConnection: 218) == 23)
        #expect(sizing.connections(forStreams: 0, perConnection: 218) == 2)
        #expect(sizing.connections(forStreams: 100_000, perConnection: 31) == 64)
        #expect(APNsPoolSizing.fixed(connections: 3, streamCap: 10).isFixed)
        #expect(!sizing.isFixed)
    }

    @Test("the streams planned: the demand, at most twice the planned rate times the round trip; the default bound leaves a distance alone")
    func plannedStreams() {
        let sizing = APNsPoolSizing()
        // A worker at 80 ms wanting 128 connections' worth of streams (263 each) gets them all.
        #expect(sizing.plannedStreams(demand: 33_664, roundTrip: .milliseconds(82)) == 33_664)
        #expect(sizing.connections(forStreams: 33_664, perConnection: 263) == 128)
        // A planned rate of 100,000/s (the default until 2026-11-29) held it to 69 connections.
        let slower = APNsPoolSizing(plannedRate: 100_000)
        let held = slower.plannedStreams(demand: 33_664, roundTrip: .milliseconds(82))
        #expect((16_400...16_401).contains(held), "100,000 × 2 × 82 ms, rounded up")
        #expect(slower.connections(forStreams: held, perConnection: 263) == 70)
        // On loopback the bound keeps a busy worker to one connection.
        let loopback = sizing.plannedStreams(demand: 32_000, roundTrip: .microseconds(400))
        #expect((200...201).contains(loopback), "250,000 × 2 × 0.4 ms, rounded up")
        #expect(sizing.connections(forStreams: loopback, perConnection: 263) == 1)
        // Before the first answer there is no round trip: the whole demand.
        #expect(sizing.plannedStreams(demand: 5_000, roundTrip: nil) == 5_000)
    }
}
