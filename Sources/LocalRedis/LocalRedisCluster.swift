import FlowControl
import Foundation
import Redis
import Spawn

/// A real Redis Cluster of local `redis-server` processes on free loopback ports, for tests,
/// benchmarks and demos: `masters` masters with `replicasPerMaster` replicas each, joined with
/// `redis-cli --cluster create`, ready once every node sees every slot served and every replica
/// attached. Persists nothing; ``stop()`` ends every process.
///
/// Failover and resharding are the real ones: ``kill(_:)`` SIGKILLs a node (its replica takes
/// over after the node timeout, 2 s here), ``reshard(slots:from:to:)`` runs
/// `redis-cli --cluster reshard`.
public actor LocalRedisCluster {
    /// A node of the cluster.
    public struct Node: Sendable {
        public let server: LocalRedisServer
        public let address: RedisClusterTopology.Address
    }

    public nonisolated let nodes: [Node]
    public nonisolated let password: String?
    /// `--cluster-node-timeout`: how long a node may be unreachable before a failover.
    public static let nodeTimeout: Duration = .seconds(2)
    private static let readinessBudget: Duration = .seconds(60)

    private var stopped: Set<Int> = []

    private init(nodes: [Node], password: String?) {
        self.nodes = nodes
        self.password = password
    }

    /// Where a node runs: the address it listens on and the command that puts a process on its
    /// host (see ``LocalRedisServer/start(redisServerPath:extraArguments:password:host:launcher:)``).
    public struct Placement: Sendable {
        public var host: String
        public var launcher: [String]

        public init(host: String, launcher: [String]) {
            self.host = host
            self.launcher = launcher
        }

        /// A free loopback port on this host.
        public static let loopback = Placement(host: "127.0.0.1", launcher: [])
    }

    /// The nodes' addresses: seeds for a client.
    public nonisolated var seeds: [RedisClusterTopology.Address] { nodes.map(\.address) }

    /// A client configuration that reaches the cluster (password included), to adjust as needed.
    public nonisolated var configuration: RedisClusterConfiguration {
        RedisClusterConfiguration(seeds: seeds, node: RedisConfiguration(password: password))
    }

    /// Starts the cluster and returns once it is ready.
    ///
    /// - Parameters:
    ///   - placements: where each node runs, one per node (`redis-cli --cluster create` makes
    ///     the first `masters` of them masters); empty: every node on loopback.
    ///   - extraArguments: more `redis-server` options for every node.
    /// - Throws: ``RedisClientError`` (`connectionFailed`) naming what did not come up.
    public static func start(
        masters: Int = 3, replicasPerMaster: Int = 1, password: String? = nil, placements: [Placement] = [], extraArguments: [String] = []
    ) async throws -> LocalRedisCluster {
        precondition(masters >= 3, "redis-cli --cluster create needs at least 3 masters")
        let count = masters * (1 + replicasPerMaster)
        precondition(placements.isEmpty || placements.count == count, "one placement per node")
        var nodes: [Node] = []
        do {
            for index in 0..<count {
                let server = try await startNode(
                    password: password, placement: placements.isEmpty ? .loopback : placements[index], extraArguments: extraArguments)
                nodes.append(Node(server: server, address: RedisClusterTopology.Address(host: server.host, port: server.port)))
            }
            let cluster = LocalRedisCluster(nodes: nodes, password: password)
            try await cluster.redisCLI(
                ["--cluster", "create"] + nodes.map(\.address.description)
                    + ["--cluster-replicas", String(replicasPerMaster), "--cluster-yes"])
            try await cluster.waitUntilReady(masters: masters, replicasPerMaster: replicasPerMaster)
            return cluster
        } catch {
            for node in nodes {
                await node.server.stop()
            }
            throw error
        }
    }

    /// Starts one cluster-enabled `redis-server`; a start that lost its cluster bus port to
    /// another process is tried again with another port.
    private static func startNode(password: String?, placement: Placement, extraArguments: [String]) async throws -> LocalRedisServer {
        var lastError: (any Error)?
        for _ in 1...5 {
            var arguments = [
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", String(nodeTimeout.wholeMilliseconds),
                "--cluster-port", String(try LocalRedisServer.freePort()),
                // A replica takes over however long ago it last heard from its master.
                "--cluster-replica-validity-factor", "0",
                // Replicas sync at once (diskless sync waits 5 s by default for more replicas),
                // and their offsets move every second (a replica reads as `loading` until then).
                "--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "1",
            ]
            if let password {
                arguments += ["--masterauth", password]
            }
            do {
                return try await LocalRedisServer.start(
                    extraArguments: arguments + extraArguments, password: password, host: placement.host, launcher: placement.launcher)
            } catch {
                lastError = error
            }
        }
        throw lastError!
    }

    /// Stops every node and removes their directories.
    public func stop() async {
        for (index, node) in nodes.enumerated() where !stopped.contains(index) {
            await node.server.stop()
        }
        stopped = Set(nodes.indices)
    }

    /// SIGKILLs one node (a master's replica takes over after ``nodeTimeout``).
    public func kill(_ address: RedisClusterTopology.Address) async {
        guard let index = nodes.firstIndex(where: { $0.address == address }), !stopped.contains(index) else { return }
        stopped.insert(index)
        await nodes[index].server.stop()
    }

    /// The topology as a running node sees it.
    public func topology() async throws -> RedisClusterTopology {
        var lastError: any Error = RedisClientError(.clusterUnavailable, message: "every node of the local cluster is stopped")
        for (index, node) in nodes.enumerated() where !stopped.contains(index) {
            do {
                return try await Self.topology(of: node.address, password: password)
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// Moves `slots` slots from the master at `from` to the master at `to` with
    /// `redis-cli --cluster reshard` (keys migrate with `MIGRATE`, clients see `ASK` and `MOVED`).
    public func reshard(slots: Int, from: RedisClusterTopology.Address, to: RedisClusterTopology.Address) async throws {
        let topology = try await topology()
        guard let source = topology.masters.first(where: { $0.address == from }), let target = topology.masters.first(where: { $0.address == to })
        else {
            throw RedisClientError(.clusterUnavailable, message: "reshard: \(from) or \(to) is not a master")
        }
        try await redisCLI([
            "--cluster", "reshard", from.description, "--cluster-from", source.id, "--cluster-to", target.id,
            "--cluster-slots", String(slots), "--cluster-yes", "--cluster-pipeline", "100",
        ])
    }

    /// Waits until every running node sees a cluster in state ok, every slot served by a
    /// healthy master with `replicasPerMaster` attached replicas (after a failover: the
    /// promoted replica with none).
    public func waitUntilReady(masters: Int, replicasPerMaster: Int) async throws {
        let deadline = ContinuousClock.now + Self.readinessBudget
        var last = "not asked yet"
        // One connection per node for the whole wait: new connections take ephemeral ports, and
        // every one taken is one a process next door (librdkafka's mock broker re-binding its
        // port) may find busy.
        var probes: [Int: RedisConnection] = [:]
        defer {
            let opened = Array(probes.values)
            Task { for connection in opened { await connection.close() } }
        }
        while ContinuousClock.now < deadline {
            do {
                var ready = true
                for (index, node) in nodes.enumerated() where !stopped.contains(index) {
                    if probes[index] == nil {
                        probes[index] = try await Self.probe(node.address, password: password)
                    }
                    let connection = probes[index]!
                    let topology = try RedisClusterTopology(clusterShards: try await connection.send("CLUSTER", "SHARDS"))
                    let healthy = topology.shards.filter { !$0.slots.isEmpty && $0.master?.health == "online" }
                    // A replica attached a moment ago reads as `loading` until its master's next
                    // ping, and confirms no write (`WAIT`) until it is online.
                    let complete = healthy.allSatisfy { shard in
                        shard.nodes.filter { $0.role == .replica && $0.health == "online" }.count >= replicasPerMaster
                    }
                    let stateOK = try await connection.send("CLUSTER", "INFO").string?.contains("cluster_state:ok") == true
                    if topology.coveredSlots != RedisHashSlot.count || healthy.count != masters || !complete || !stateOK {
                        ready = false
                        last = "\(node.address): \(topology.coveredSlots) slots, \(healthy.count) healthy masters"
                        break
                    }
                }
                if ready { return }
            } catch {
                last = "\(error)"
                probes.removeAll()
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw RedisClientError(.connectionFailed, message: "the local Redis Cluster did not become ready: \(last)", isRetryable: false)
    }

    private static func topology(of address: RedisClusterTopology.Address, password: String?) async throws -> RedisClusterTopology {
        let connection = try await probe(address, password: password)
        defer { Task { await connection.close() } }
        return try RedisClusterTopology(clusterShards: try await connection.send("CLUSTER", "SHARDS"))
    }

    private static func probe(_ address: RedisClusterTopology.Address, password: String?) async throws -> RedisConnection {
        var configuration = RedisConfiguration(host: address.host, port: address.port, password: password)
        configuration.connectTimeout = .seconds(1)
        configuration.commandTimeout = .seconds(2)
        configuration.reconnect = .init(maxAttempts: 1)
        return try await RedisConnection.connect(configuration: configuration)
    }

    /// Runs `redis-cli` with `arguments` (and the password), failing with its output when it
    /// exits with an error.
    private func redisCLI(_ arguments: [String]) async throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-redis-cli-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let handle = try FileHandle(forWritingTo: output)
        let process = try ChildProcess(
            executable: try LocalRedisServer.locate("redis-cli").path,
            arguments: (password.map { ["-a", $0, "--no-auth-warning"] } ?? []) + arguments,
            output: .descriptor(handle.fileDescriptor))
        let status: Int32
        switch await process.exited() {
        case .exited(let code): status = code
        case .signalled(let signal): status = 128 + signal
        }
        try? handle.close()
        guard status == 0 else {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            throw RedisClientError(
                .connectionFailed, message: "redis-cli \(arguments.prefix(2).joined(separator: " ")) exited \(status): \(text.suffix(600))",
                isRetryable: false)
        }
    }
}

extension LocalRedisCluster {
    /// Runs `body` against a fresh cluster and stops it afterwards, also when `body` throws.
    public static func with<Value>(
        masters: Int = 3, replicasPerMaster: Int = 1, password: String? = nil,
        _ body: (LocalRedisCluster) async throws -> Value
    ) async throws -> Value {
        let cluster = try await LocalRedisCluster.start(masters: masters, replicasPerMaster: replicasPerMaster, password: password)
        do {
            let value = try await body(cluster)
            await cluster.stop()
            return value
        } catch {
            await cluster.stop()
            throw error
        }
    }
}
