import FlowControl
import Logging
import Synchronization

/// A client of a Redis Cluster (or Valkey, or a managed service in cluster mode): the same
/// ``RedisCommands`` as a single server's ``RedisClient``, with every command sent to the master
/// of its key's hash slot.
///
/// - The topology comes from `CLUSTER SHARDS` (Redis ≥ 7.0), asked of a known node or a seed;
///   it is read again when a command finds it older than
///   ``RedisClusterConfiguration/refreshInterval``, after a `MOVED`, `CLUSTERDOWN` or
///   `MASTERDOWN`, and when a node cannot be reached (a failover moves its slots to a replica).
/// - One pool of connections per master (a ``RedisClient``); AUTH, timeouts and reconnects are
///   the same on every node.
/// - Redirections and retries follow ``RedisClusterRouter``: `MOVED` updates the map and sends
///   the command to the named node, `ASK` sends it there once after `ASKING`, `TRYAGAIN`,
///   `CLUSTERDOWN`, `LOADING` and `MASTERDOWN` back off and try again, up to a bound.
/// - Pipelines and script batches are split per node, sent to every node at once, and their
///   answers put back in the caller's order; an answer that redirects is followed for its
///   command alone. Scripts run with `EVALSHA`, loaded on each node the first time it lacks them.
/// - A command that could not be sent (no connection to its node) is tried again after the
///   topology is read again; one whose connection broke after it was sent is not (it may have
///   run): the transport error is thrown and the caller decides, as with a single server.
/// - Writes are confirmed by a replica (`WAIT`, on the same connection) on masters that have
///   replicas (``RedisClusterConfiguration/replicaAcknowledgements``): replication is
///   asynchronous, and a write its master acknowledged just before dying would otherwise be
///   missing on the replica that takes over (a sent marker lost is a notification sent twice).
///   A write fewer replicas confirmed within the timeout throws
///   ``RedisClientError/Code/notReplicated`` (the API answers 503): a master cut off from its
///   replicas by a partition keeps taking writes until it notices, and the failover on the
///   other side discards them (docs/faults.md, "Partitions").
public final class RedisClusterClient: RedisCommands {
    private struct State {
        var router: RedisClusterRouter
        /// The masters of the last topology read.
        var masters: [RedisClusterTopology.Address] = []
        /// Every node of the last topology read (replicas too): where to ask for it next time.
        var knownNodes: [RedisClusterTopology.Address] = []
        /// Masters with at least one online replica: their writes are confirmed. A replica still
        /// loading its first copy confirms nothing; its master's writes go unconfirmed until then.
        var replicated: Set<RedisClusterTopology.Address> = []
        var pools: [RedisClusterTopology.Address: RedisClient] = [:]
        var lastRefresh: ContinuousClock.Instant?
        var refreshing: Task<Void, any Error>?
        var isShutDown = false
        /// Nodes that last failed to answer (no connection, no reply in time): asked for the
        /// topology after every other node, so that a node cut off by a partition does not hold
        /// up the discovery of its successor for a command timeout per read.
        var unresponsive: Set<RedisClusterTopology.Address> = []

        /// The master of `slot` (any master for a command without a key); `nil` when none
        /// serves it in the last topology read.
        func master(of slot: RedisHashSlot?) -> RedisClusterTopology.Address? {
            masterIndex(of: slot).map { router.nodes[$0] }
        }

        /// The index in the router's nodes of ``master(of:)``.
        func masterIndex(of slot: RedisHashSlot?) -> Int? {
            guard let slot else { return masters.first.flatMap { router.nodes.firstIndex(of: $0) } }
            return router.nodeIndex(for: slot)
        }
    }

    public let configuration: RedisClusterConfiguration
    private let logger: Logger
    private let state: Mutex<State>

    /// Creates a client; no connection is opened until the first command.
    public init(
        configuration: RedisClusterConfiguration,
        logger: Logger = Logger(label: "pushfleet.redis", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.configuration = configuration
        self.logger = logger
        state = Mutex(State(router: RedisClusterRouter(maxRedirections: configuration.maxRedirections)))
    }

    // MARK: - RedisCommands

    public func send(_ arguments: [RedisArgument]) async throws -> RedisReply {
        let reply = try await answer(arguments)
        if case .error(let message) = reply {
            throw RedisClientError(.serverError, message: message)
        }
        return reply
    }

    public func pipeline(_ commands: [[RedisArgument]]) async throws -> [RedisReply] {
        let slots = try RedisCommandKeys.slots(of: commands)
        return try await fanOut(
            slots: slots,
            run: { [self] node, pool, indices in
                try await confirmed(on: node, pool, indices.count == commands.count ? commands : indices.map { commands[$0] })
            },
            single: { index in
                try await self.answer(commands[index])
            })
    }

    public func evalScripts(_ calls: [RedisScriptCall]) async throws -> [RedisReply] {
        let slots = try calls.map { call throws(RedisClientError) in try RedisCommandKeys.slot(ofKeys: call.keys, what: "a script's keys") }
        return try await fanOut(
            slots: slots,
            run: { [self] node, pool, indices in
                try await confirmedScripts(on: node, pool, asking: false, indices.map { calls[$0] })
            },
            single: { index in
                try await self.execute(slot: slots[index]) { node, pool, asking in
                    try await self.confirmedScripts(on: node, pool, asking: asking, [calls[index]])[0]
                }
            })
    }

    public func shutdown() async {
        let pools = state.withLock { state in
            state.isShutDown = true
            state.refreshing?.cancel()
            return Array(state.pools.values)
        }
        for pool in pools {
            await pool.shutdown()
        }
    }

    // MARK: - Beyond RedisCommands

    /// Sends `arguments` to every master (e.g. `FLUSHALL`, `INFO memory`) and returns each
    /// master's answer.
    public func sendToEveryMaster(_ arguments: [RedisArgument]) async throws -> [(RedisClusterTopology.Address, RedisReply)] {
        try await ensureTopology()
        let masters = state.withLock { $0.masters }
        var answers: [(RedisClusterTopology.Address, RedisReply)] = []
        for master in masters {
            answers.append((master, try await pool(for: master).send(arguments)))
        }
        return answers
    }

    /// The masters of the topology as last read, reading it first if needed.
    public func masters() async throws -> [RedisClusterTopology.Address] {
        try await ensureTopology()
        return state.withLock { $0.masters }
    }

    /// Reads the topology again now.
    public func refreshTopology() async throws {
        try await refresh()
    }

    // MARK: - Routing

    /// One command's answer, an error answer included, after its redirections.
    private func answer(_ arguments: [RedisArgument]) async throws -> RedisReply {
        try await execute(slot: try RedisCommandKeys(command: arguments).slot(of: arguments)) { node, pool, asking in
            try await self.confirmed(on: node, pool, asking ? [["ASKING"], arguments] : [arguments]).last!
        }
    }

    /// Sends `commands` in one pipeline to the node; on a master with replicas, a batch that
    /// writes ends with `WAIT` (in the same round trip), so its writes are confirmed by
    /// ``RedisClusterConfiguration/replicaAcknowledgements`` replicas before it returns.
    private func confirmed(
        on node: RedisClusterTopology.Address, _ pool: RedisClient, _ commands: [[RedisArgument]]
    ) async throws -> [RedisReply] {
        guard let wait = waitCommand(for: node) else {
            return try await pool.pipeline(commands)
        }
        let isWrite = commands.map { !RedisCommandKeys(command: $0).isRead }
        guard isWrite.contains(true) else {
            return try await pool.pipeline(commands)
        }
        let replies = try await pool.pipeline(commands + [wait])
        let writes = zip(isWrite, replies).filter(\.0).map(\.1)
        try confirm(wait: replies.last!, writes: writes, on: node)
        return Array(replies.dropLast())
    }

    /// Throws ``RedisClientError/Code/notReplicated`` when the batch's writes are not confirmed
    /// (``RedisWriteConfirmation``), and reads the topology again: a replica the cluster has
    /// since marked failed is no longer waited for.
    private func confirm(wait: RedisReply, writes: [RedisReply], on node: RedisClusterTopology.Address) throws {
        let required = configuration.replicaAcknowledgements
        guard case .unconfirmed(let replicas) = RedisWriteConfirmation.judge(wait: wait, writes: writes, required: required) else { return }
        refreshSoon()
        throw RedisClientError(
            .notReplicated,
            message: "\(node) confirmed the write on \(replicas) of \(required) replicas within \(configuration.replicaAcknowledgementTimeout)"
                + (wait.int == nil ? " (WAIT answered \(wait))" : ""))
    }

    /// Runs scripts on one of the node's connections (after `ASKING` when `asking`); on a master
    /// with replicas, then `WAIT` on the same connection.
    private func confirmedScripts(
        on node: RedisClusterTopology.Address, _ pool: RedisClient, asking: Bool, _ calls: [RedisScriptCall]
    ) async throws -> [RedisReply] {
        let wait = waitCommand(for: node)
        return try await pool.withConnection { connection in
            if asking {
                _ = try await connection.send(["ASKING"])
            }
            let replies = try await connection.evalScripts(calls)
            if let wait {
                try self.confirm(wait: try await connection.pipeline([wait])[0], writes: replies, on: node)
            }
            return replies
        }
    }

    /// `WAIT <acknowledgements> <timeout ms>` for a master with replicas; `nil` otherwise.
    private func waitCommand(for node: RedisClusterTopology.Address) -> [RedisArgument]? {
        let acknowledgements = configuration.replicaAcknowledgements
        guard acknowledgements > 0, state.withLock({ $0.replicated.contains(node) }) else { return nil }
        let timeout = configuration.replicaAcknowledgementTimeout
        let milliseconds = max(1, Int(timeout.wholeMilliseconds))
        return ["WAIT", .integer(acknowledgements), .integer(milliseconds)]
    }

    /// Runs `operation` on the pool of `slot`'s master (any master for `nil`), following the
    /// router's decisions on redirections, a cluster that is not ready and unreachable nodes.
    private func execute(
        slot: RedisHashSlot?, _ operation: (RedisClusterTopology.Address, RedisClient, _ asking: Bool) async throws -> RedisReply
    ) async throws -> RedisReply {
        var target = try await route(slot)
        var asking = false
        var attempt = 0
        while true {
            let reply: RedisReply
            do {
                reply = try await operation(target, pool(for: target), asking)
            } catch let error as RedisClientError where error.code == .connectionFailed {
                attempt += 1
                guard case .retry(let delay, _) = state.withLock({ $0.router.decideAfterUnreachableNode(attempt: attempt) }) else {
                    throw error
                }
                logger.debug("cluster node unreachable; reading the topology again", metadata: ["node": "\(target)", "attempt": "\(attempt)"])
                state.withLock { _ = $0.unresponsive.insert(target) }
                try await Task.sleep(for: delay)
                try? await refresh()
                target = try await route(slot)
                asking = false
                continue
            } catch let error as RedisClientError where Self.mayMeanFailover(error) {
                // Sent, so not sent again here (it may have run); the stage decides.
                failed(target)
                throw error
            }
            guard let message = reply.errorMessage, let redirection = RedisClusterRouter.Redirection(errorMessage: message) else {
                return reply
            }
            attempt += 1
            switch state.withLock({ $0.router.decide(after: redirection, attempt: attempt) }) {
            case .giveUp:
                return reply
            case .send(let address, let ask):
                if case .moved = redirection {
                    refreshSoon()
                }
                target = address
                asking = ask
            case .retry(let delay, let refresh):
                try await Task.sleep(for: delay)
                if refresh {
                    try? await self.refresh()
                }
                target = try await route(slot)
                asking = false
            }
        }
    }

    /// Runs items grouped by their slot's node, every node at once, and puts the answers back in
    /// order; an item whose answer redirects, or whose node could not be reached, runs again
    /// alone through `single`.
    private func fanOut(
        slots: [RedisHashSlot?],
        run: @escaping @Sendable (RedisClusterTopology.Address, RedisClient, [Int]) async throws -> [RedisReply],
        single: (Int) async throws -> RedisReply
    ) async throws -> [RedisReply] {
        guard !slots.isEmpty else { return [] }
        let groups = try await route(slots)
        var replies: [RedisReply]
        // Items to run again alone: redirected, or not sent (their node unreachable).
        var again: [Int] = []
        if groups.count == 1, let (node, indices) = groups.first {
            // One master, every item in order: no child task, no reassembly.
            do {
                replies = try await run(node, pool(for: node), indices)
            } catch let error as RedisClientError where error.code == .connectionFailed {
                // Not sent: each goes again alone, after the topology is read again.
                state.withLock { _ = $0.unresponsive.insert(node) }
                replies = Array(repeating: .null, count: slots.count)
                again = Array(indices)
            } catch let error as RedisClientError where Self.mayMeanFailover(error) {
                failed(node)
                throw error
            }
        } else {
            replies = Array(repeating: .null, count: slots.count)
            try await withThrowingTaskGroup(of: ([Int], [RedisReply]?).self) { group in
                for (node, indices) in groups {
                    let pool = pool(for: node)
                    group.addTask {
                        do {
                            return (indices, try await run(node, pool, indices))
                        } catch let error as RedisClientError where error.code == .connectionFailed {
                            // Not sent: each goes again alone, after the topology is read again.
                            self.state.withLock { _ = $0.unresponsive.insert(node) }
                            return (indices, nil)
                        } catch let error as RedisClientError where Self.mayMeanFailover(error) {
                            self.failed(node)
                            throw error
                        }
                    }
                }
                for try await (indices, answers) in group {
                    guard let answers else {
                        again += indices
                        continue
                    }
                    for (index, reply) in zip(indices, answers) {
                        replies[index] = reply
                    }
                }
            }
        }
        again += replies.indices.filter { Self.redirects(replies[$0]) }
        for index in again.sorted() {
            replies[index] = try await single(index)
        }
        return replies
    }

    /// The indices of `slots` by the master of each slot, reading the topology once more when it
    /// is unknown, stale or lacks one of them.
    private func route(_ slots: [RedisHashSlot?]) async throws -> [RedisClusterTopology.Address: [Int]] {
        try await ensureTopology()
        for attempt in 0..<2 {
            let groups = state.withLock { state -> [RedisClusterTopology.Address: [Int]]? in
                // By the router's node index: no hashing of an address per item.
                var byNode = [[Int]](repeating: [], count: state.router.nodes.count)
                for (index, slot) in slots.enumerated() {
                    guard let node = state.masterIndex(of: slot) else { return nil }
                    byNode[node].append(index)
                }
                var groups: [RedisClusterTopology.Address: [Int]] = [:]
                for (node, indices) in byNode.enumerated() where !indices.isEmpty {
                    groups[state.router.nodes[node]] = indices
                }
                return groups
            }
            if let groups { return groups }
            if attempt == 0 { try await refresh() }
        }
        throw RedisClientError(.clusterUnavailable, message: "a slot of the batch is served by no master of the cluster")
    }

    /// The master of `slot`, reading the topology when it is unknown, stale or lacks the slot.
    private func route(_ slot: RedisHashSlot?) async throws -> RedisClusterTopology.Address {
        try await ensureTopology()
        if let address = state.withLock({ $0.master(of: slot) }) { return address }
        try await refresh()
        if let address = state.withLock({ $0.master(of: slot) }) { return address }
        throw RedisClientError(
            .clusterUnavailable, message: "no master serves slot \(slot.map(String.init(describing:)) ?? "(any)") of the cluster")
    }

    /// Reads the topology if it was never read; starts a background read when it is stale.
    private func ensureTopology() async throws {
        let (known, stale) = state.withLock { state -> (Bool, Bool) in
            guard let last = state.lastRefresh else { return (false, false) }
            return (true, ContinuousClock.now - last > configuration.refreshInterval)
        }
        if !known {
            try await refresh()
        } else if stale {
            refreshSoon()
        }
    }

    /// Whether a command's failure after it was sent (no answer in time, the connection
    /// broken) may mean its master is gone: a master cut off by a partition answers nothing and
    /// resets nothing, and its slots move to a replica after the node timeout. The topology is
    /// then read again at once rather than at the next refresh interval, so the next command
    /// goes to the promoted replica.
    private static func mayMeanFailover(_ error: RedisClientError) -> Bool {
        error.code == .timeout || error.code == .connectionClosed
    }

    /// A command sent to `node` got no answer: the node is asked for the topology last, and the
    /// topology is read again at once.
    private func failed(_ node: RedisClusterTopology.Address) {
        state.withLock { _ = $0.unresponsive.insert(node) }
        refreshSoon()
    }

    /// Starts reading the topology in the background, unless a read is under way.
    private func refreshSoon() {
        Task { try? await self.refresh() }
    }

    /// Reads the topology (one read at a time: concurrent callers wait for the same one).
    private func refresh() async throws {
        let task: Task<Void, any Error> = try state.withLock { state in
            if state.isShutDown {
                throw RedisClientError(.clientShutdown, message: "the Redis cluster client was shut down")
            }
            if let running = state.refreshing { return running }
            let task = Task { try await self.readTopology() }
            state.refreshing = task
            return task
        }
        try await task.value
    }

    /// Asks the known nodes, then the seeds, for `CLUSTER SHARDS` until one answers with a
    /// topology that serves slots, and takes it.
    private func readTopology() async throws {
        defer { state.withLock { $0.refreshing = nil } }
        let candidates = state.withLock { state in
            var seen = Set<RedisClusterTopology.Address>()
            let all = (state.masters + state.knownNodes + configuration.seeds).filter { seen.insert($0).inserted }
            return all.filter { !state.unresponsive.contains($0) } + all.filter { state.unresponsive.contains($0) }
        }
        var lastError: any Error = RedisClientError(.clusterUnavailable, message: "no cluster node to ask")
        for (index, candidate) in candidates.enumerated() {
            do {
                let reply = try await askTopology(of: candidate, patiently: index == candidates.count - 1)
                if let message = reply.errorMessage {
                    throw RedisClientError(.serverError, message: message)
                }
                let topology = try RedisClusterTopology(clusterShards: reply)
                guard topology.coveredSlots > 0 else {
                    throw RedisClientError(.clusterUnavailable, message: "\(candidate) knows no master that serves slots")
                }
                let changed = state.withLock { state -> Bool in
                    let masters = topology.masters.map(\.address)
                    let changed = masters != state.masters || state.router.knownSlots != topology.coveredSlots
                    state.router.update(topology)
                    state.masters = masters
                    state.knownNodes = topology.shards.flatMap { $0.nodes.map(\.address) }
                    state.replicated = Set(
                        topology.shards.compactMap { shard in
                            shard.nodes.contains { $0.role == .replica && $0.health == "online" } ? shard.master?.address : nil
                        })
                    state.lastRefresh = .now
                    state.unresponsive.remove(candidate)
                    return changed
                }
                if changed {
                    logger.info(
                        "Redis Cluster topology",
                        metadata: ["masters": "\(topology.masters.map(\.address.description))", "slots": "\(topology.coveredSlots)"])
                }
                return
            } catch {
                lastError = error
                state.withLock { _ = $0.unresponsive.insert(candidate) }
                logger.debug("could not read the cluster topology", metadata: ["node": "\(candidate)", "error": "\(error)"])
            }
        }
        throw RedisClientError(
            .clusterUnavailable, message: "no node of the cluster answered CLUSTER SHARDS (asked \(candidates.map(\.description)))",
            underlying: lastError)
    }

    /// How long a node has to answer `CLUSTER SHARDS` before the next one is asked.
    static let topologyAnswerTimeout: Duration = .seconds(1)

    /// `CLUSTER SHARDS` from `node`: within ``topologyAnswerTimeout`` unless `patiently` (the
    /// last node to ask gets the whole command timeout). A node cut off by a partition answers
    /// nothing, and its pool may be full of commands waiting for it: a read of the topology
    /// must not wait on it while the other nodes know where its slots went.
    private func askTopology(of node: RedisClusterTopology.Address, patiently: Bool) async throws -> RedisReply {
        let pool = pool(for: node)
        if patiently { return try await pool.send(["CLUSTER", "SHARDS"]) }
        return try await withThrowingTaskGroup(of: RedisReply?.self) { group in
            group.addTask { try await pool.send(["CLUSTER", "SHARDS"]) }
            group.addTask {
                try await Task.sleep(for: Self.topologyAnswerTimeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let reply = first else {
                throw RedisClientError(.timeout, message: "\(node) did not answer CLUSTER SHARDS within \(Self.topologyAnswerTimeout)")
            }
            return reply
        }
    }

    private func pool(for address: RedisClusterTopology.Address) -> RedisClient {
        state.withLock { state in
            if let pool = state.pools[address] { return pool }
            let pool = RedisClient(configuration: configuration.configuration(for: address), logger: logger)
            state.pools[address] = pool
            return pool
        }
    }

    private static func redirects(_ reply: RedisReply) -> Bool {
        reply.errorMessage.flatMap(RedisClusterRouter.Redirection.init(errorMessage:)) != nil
    }
}
