import Foundation
import LocalRedis
import Redis
import Testing

/// The cluster client against a real Redis Cluster of local `redis-server` processes (3 masters,
/// 3 replicas), started by the tests.
@Suite("Redis Cluster client on a real cluster", .serialized)
struct RedisClusterClientTests {
    static func keys(_ count: Int) -> [String] { (0..<count).map { "key-\($0)" } }

    @Test("commands, pipelines and scripts go to their slots' masters; answers come back in order")
    func routing() async throws {
        try await LocalRedisCluster.with { cluster async throws in
            let client = RedisClusterClient(configuration: cluster.configuration)
            defer { Task { await client.shutdown() } }
            let keys = Self.keys(300)
            let written = try await client.pipeline(keys.map { ["SET", .string($0), .string("value of \($0)")] })
            #expect(written.allSatisfy { $0 == .status("OK") })
            let read = try await client.pipeline(keys.map { ["GET", .string($0)] })
            #expect(read.map(\.string) == keys.map { "value of \($0)" })
            #expect(try await client.send("GET", "key-7").string == "value of key-7")
            #expect(try await client.send("PING") == .status("PONG"))

            // Each master holds exactly the keys of its slots.
            let topology = try await cluster.topology()
            var total = 0
            for master in topology.masters {
                let node = RedisClient(configuration: RedisConfiguration(host: master.address.host, port: master.address.port))
                let dbsize = try await node.send("DBSIZE").int ?? -1
                let owned = keys.filter { key in master.shard(in: topology).slots.contains { $0.contains(Int(RedisHashSlot(key: key).rawValue)) } }
                    .count
                #expect(dbsize == Int64(owned), "\(master.address)")
                total += Int(dbsize)
                let slot = try await node.send("CLUSTER", "KEYSLOT", "key-42").int
                #expect(slot == Int64(RedisHashSlot(key: "key-42").rawValue), "the client's slot is the server's")
                await node.shutdown()
            }
            #expect(total == keys.count)
            #expect(Set(try await client.masters()) == Set(topology.masters.map(\.address)))

            // Scripts: loaded on each node the first time it lacks them (NOSCRIPT), routed by key.
            let script = RedisScript("return redis.call('GET', KEYS[1]) .. ARGV[1]")
            let calls = keys.prefix(30).map { RedisScriptCall(script, keys: [.string($0)], arguments: ["!"]) }
            let answers = try await client.evalScripts(calls)
            #expect(answers.map(\.string) == keys.prefix(30).map { "value of \($0)!" })
        }
    }

    @Test("a command or script whose keys span slots is refused before anything is sent")
    func crossSlot() async throws {
        try await LocalRedisCluster.with { cluster async throws in
            let client = RedisClusterClient(configuration: cluster.configuration)
            defer { Task { await client.shutdown() } }
            let script = RedisScript("return redis.call('SET', KEYS[1], ARGV[1])")
            let mixed = RedisScriptCall(script, keys: ["foo", "bar"], arguments: ["x"])
            let error = await redisError { try await client.evalScripts([RedisScriptCall(script, keys: ["{t}a"], arguments: ["1"]), mixed]) }
            #expect(error?.code == .crossSlot && error?.isRetryable == false)
            #expect(error?.message.contains("hash tag") == true)
            #expect(try await client.send("EXISTS", "{t}a").int == 0, "nothing of the batch was sent")
            #expect(await redisError { try await client.send("DEL", "foo", "bar") }?.code == .crossSlot)
            #expect(try await client.send("DEL", "{t}a", "{t}b").int == 0, "one hash tag: one slot")
        }
    }

    @Test("ASK during a slot's migration goes to the importing node once; MOVED after it updates the map")
    func askAndMoved() async throws {
        try await LocalRedisCluster.with { cluster async throws in
            let client = RedisClusterClient(configuration: cluster.configuration)
            defer { Task { await client.shutdown() } }
            let key = "migrating-key"
            let slot = RedisHashSlot(key: key)
            _ = try await client.send("SET", .string(key), "before")
            let topology = try await cluster.topology()
            let source = try #require(topology.masters.first { $0.shard(in: topology).slots.contains { $0.contains(Int(slot.rawValue)) } })
            let target = try #require(topology.masters.first { $0.id != source.id })
            let sourceNode = RedisClient(configuration: RedisConfiguration(host: source.address.host, port: source.address.port))
            let targetNode = RedisClient(configuration: RedisConfiguration(host: target.address.host, port: target.address.port))
            // Migrate the slot by hand: the key moves, the slot is still the source's.
            _ = try await targetNode.send("CLUSTER", "SETSLOT", .integer(Int(slot.rawValue)), "IMPORTING", .string(source.id))
            _ = try await sourceNode.send("CLUSTER", "SETSLOT", .integer(Int(slot.rawValue)), "MIGRATING", .string(target.id))
            let migrated = try await sourceNode.send(
                "MIGRATE", .string(target.address.host), .integer(target.address.port), .string(key), 0, 5_000)
            #expect(migrated == .status("OK"))
            #expect(try await sourceNode.pipeline([["GET", .string(key)]])[0].errorMessage?.hasPrefix("ASK") == true)
            #expect(try await client.send("GET", .string(key)).string == "before", "followed ASK")
            #expect(try await client.pipeline([["GET", .string(key)], ["GET", "other"]]).first?.string == "before")

            // Finish the migration: the source now answers MOVED; the client follows it.
            for node in [targetNode, sourceNode] {
                _ = try await node.send("CLUSTER", "SETSLOT", .integer(Int(slot.rawValue)), "NODE", .string(target.id))
            }
            #expect(try await sourceNode.pipeline([["GET", .string(key)]])[0].errorMessage?.hasPrefix("MOVED") == true)
            _ = try await client.send("SET", .string(key), "after")
            #expect(try await targetNode.send("GET", .string(key)).string == "after")
            await sourceNode.shutdown()
            await targetNode.shutdown()
        }
    }

    @Test("resharding under load: every write lands, every read finds it")
    func resharding() async throws {
        try await LocalRedisCluster.with(replicasPerMaster: 0) { cluster async throws in
            let client = RedisClusterClient(configuration: cluster.configuration)
            defer { Task { await client.shutdown() } }
            let keys = Self.keys(5_000)
            _ = try await client.pipeline(keys.map { ["SET", .string($0), "1"] })
            let topology = try await cluster.topology()
            let writer = Task {
                var rounds = 0
                while !Task.isCancelled {
                    let answers: [RedisReply]
                    do {
                        answers = try await client.pipeline(keys.map { ["INCR", .string($0)] })
                    } catch is CancellationError {
                        break  // the round under way may have run in part: counted by no one
                    }
                    try #require(answers.allSatisfy { $0.int != nil }, "\(answers.first { $0.int == nil }!)")
                    rounds += 1
                }
                return rounds
            }
            try await cluster.reshard(slots: 2_000, from: topology.masters[0].address, to: topology.masters[1].address)
            writer.cancel()
            let rounds = try await writer.value
            let values = try await client.pipeline(keys.map { ["GET", .string($0)] }).compactMap { $0.string.flatMap(Int.init) }
            #expect(values.count == keys.count)
            #expect(Set(values).count <= 2, "every key saw every round (or the round under way at the end): \(Set(values))")
            #expect(values.allSatisfy { $0 >= rounds }, "no write was lost")
            let after = try await cluster.topology()
            #expect(after.masters[1].shard(in: after).slots.reduce(0) { $0 + $1.count } > 5_000)
        }
    }

    @Test("a master's failover: commands for its slots go to the promoted replica")
    func failover() async throws {
        try await LocalRedisCluster.with { cluster async throws in
            var configuration = cluster.configuration
            configuration.node = configuration.node.fastFailing()
            let client = RedisClusterClient(configuration: configuration)
            defer { Task { await client.shutdown() } }
            let keys = Self.keys(1_000)
            // A replica still loading its first copy of the master acknowledges nothing, and the
            // client's WAIT gives up after 500 ms by design (a lagging replica does not stop the
            // fleet): the writes below are confirmed once every replica is online.
            var topology = try await cluster.topology()
            let deadline = ContinuousClock.now + .seconds(30)
            while !topology.shards.allSatisfy({ shard in shard.nodes.contains { $0.role == .replica && $0.health == "online" } }) {
                try #require(ContinuousClock.now < deadline, "every master's replica online: \(topology)")
                try await Task.sleep(for: .milliseconds(100))
                topology = try await cluster.topology()
            }
            // Confirmed by each master's replica (WAIT) before the pipeline returns.
            _ = try await client.pipeline(keys.map { ["SET", .string($0), "kept"] })
            let victim = topology.masters[0]
            await cluster.kill(victim.address)
            // Every key is readable again once the replica took over (its writes were replicated).
            let values = try await client.pipeline(keys.map { ["GET", .string($0)] })
            #expect(values.allSatisfy { $0.string == "kept" }, "\(values.filter { $0.string != "kept" }.prefix(3))")
            #expect(!(try await client.masters()).contains(victim.address))
        }
    }

    @Test("a master that stops answering (frozen, as across a partition): after its timeout the next command goes to its promoted replica")
    func silentMasterIsReplacedAfterItsTimeout() async throws {
        try await LocalRedisCluster.with { cluster async throws in
            var configuration = cluster.configuration
            configuration.node = configuration.node.fastFailing()
            configuration.node.commandTimeout = .seconds(2)
            let client = RedisClusterClient(configuration: configuration)
            defer { Task { await client.shutdown() } }
            _ = try await client.send("SET", "silent-key", "before")
            let topology = try await cluster.topology()
            let slot = Int(RedisHashSlot(key: "silent-key").rawValue)
            let master = try #require(topology.shards.first { $0.slots.contains { $0.contains(slot) } }?.master)
            let server = try #require(cluster.nodes.first { $0.address == master.address }).server
            await server.pause()
            // The cluster promotes the replica after its node timeout; the client, whose
            // topology still names the frozen master, learns it from its first timeout.
            let promoted = await Self.waitForFailover(of: master.address, in: cluster)
            let first = await redisError { try await client.send("SET", "silent-key", "during") }
            let answered = await Self.answersWithin(attempts: 5) { try await client.send("SET", "silent-key", "after failover") }
            await server.resume()
            #expect(promoted, "the cluster failed \(master.address) over")
            #expect(first?.code == .timeout, "\(String(describing: first))")
            #expect(answered, "a command after the timeout went to the promoted replica")
            #expect(!(try await client.masters()).contains(master.address))
        }
    }

    /// Waits (at most 30 s) until no shard with slots has `address` as its master.
    static func waitForFailover(of address: RedisClusterTopology.Address, in cluster: LocalRedisCluster) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let topology = try? await cluster.topology(),
                !topology.shards.contains(where: { $0.master?.address == address && !$0.slots.isEmpty })
            {
                return true
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    /// Whether `command` answers OK within `attempts` tries, 100 ms apart.
    static func answersWithin(attempts: Int, _ command: () async throws -> RedisReply) async -> Bool {
        for _ in 0..<attempts {
            if (try? await command())?.string == "OK" { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    @Test("writes are confirmed by a replica (WAIT) before they return; reads, and masters without replicas, are not")
    func replicaConfirmation() async throws {
        func waits(_ client: RedisClusterClient) async throws -> Int {
            try await client.sendToEveryMaster(["INFO", "commandstats"]).reduce(0) { total, answer in
                let line = answer.1.string?.split(whereSeparator: \.isNewline).first { $0.hasPrefix("cmdstat_wait:") }
                return total + (line.flatMap { $0.split(separator: "=").dropFirst().first?.split(separator: ",").first }.flatMap { Int($0) } ?? 0)
            }
        }
        try await LocalRedisCluster.with { cluster async throws in
            let client = RedisClusterClient(configuration: cluster.configuration)
            defer { Task { await client.shutdown() } }
            _ = try await client.pipeline(Self.keys(300).map { ["SET", .string($0), "x"] })
            let afterWrites = try await waits(client)
            #expect(afterWrites == 3, "one WAIT per master's batch")
            _ = try await client.pipeline(Self.keys(300).map { ["GET", .string($0)] })
            _ = try await client.send("HGETALL", "some-hash")
            #expect(try await waits(client) == afterWrites, "reads wait for nothing")
            let script = RedisScript("return redis.call('INCR', KEYS[1])")
            _ = try await client.evalScripts([RedisScriptCall(script, keys: ["counter"])])
            #expect(try await waits(client) == afterWrites + 1)
        }
        try await LocalRedisCluster.with(replicasPerMaster: 0) { cluster async throws in
            let client = RedisClusterClient(configuration: cluster.configuration)
            defer { Task { await client.shutdown() } }
            _ = try await client.pipeline(Self.keys(300).map { ["SET", .string($0), "x"] })
            #expect(try await waits(client) == 0, "no replica: no WAIT (it would only time out)")
        }
    }

    @Test("a write no replica confirms in time (its replica cut off) throws notReplicated; confirmed writes return")
    func unconfirmedWriteIsNotAcknowledged() async throws {
        try await LocalRedisCluster.with { cluster async throws in
            var configuration = cluster.configuration
            configuration.replicaAcknowledgementTimeout = .milliseconds(200)
            let client = RedisClusterClient(configuration: configuration)
            defer { Task { await client.shutdown() } }
            _ = try await client.send("SET", "partitioned-key", "confirmed")
            let topology = try await cluster.topology()
            let slot = Int(RedisHashSlot(key: "partitioned-key").rawValue)
            let shard = try #require(topology.shards.first { $0.slots.contains { $0.contains(slot) } })
            let replica = try #require(shard.nodes.first { $0.role == .replica })
            let server = try #require(cluster.nodes.first { $0.address == replica.address }).server
            // A frozen replica answers nothing, as one across a partition: the master runs the
            // write and WAIT counts no replica.
            await server.pause()
            var thrown: RedisClientError?
            do {
                _ = try await client.send("SET", "partitioned-key", "unconfirmed")
            } catch let error as RedisClientError {
                thrown = error
            }
            await server.resume()
            #expect(thrown?.code == .notReplicated, "\(String(describing: thrown))")
            #expect(thrown?.isRetryable == true)
            _ = try await client.send("SET", "partitioned-key", "confirmed again")
            #expect(try await client.send("GET", "partitioned-key").string == "confirmed again")
        }
    }

    @Test("AUTH with an ACL user on every node")
    func aclUser() async throws {
        try await LocalRedisCluster.with(replicasPerMaster: 0, password: "admin-pass") { cluster async throws in
            for node in cluster.nodes {
                let admin = RedisClient(configuration: RedisConfiguration(host: node.address.host, port: node.address.port, password: "admin-pass"))
                #expect(try await admin.send("ACL", "SETUSER", "worker", "on", ">worker-pass", "~*", "+@all") == .status("OK"))
                await admin.shutdown()
            }
            var configuration = cluster.configuration
            configuration.node.username = "worker"
            configuration.node.password = "worker-pass"
            let client = RedisClusterClient(configuration: configuration)
            defer { Task { await client.shutdown() } }
            _ = try await client.pipeline(Self.keys(100).map { ["SET", .string($0), "x"] })
            let whoami = try await client.sendToEveryMaster(["ACL", "WHOAMI"])
            #expect(whoami.count == 3 && whoami.allSatisfy { $0.1.string == "worker" })
            var wrong = configuration
            wrong.node = wrong.node.fastFailing()
            wrong.node.password = "nope"
            let refused = RedisClusterClient(configuration: wrong)
            #expect(await redisError { try await refused.send("GET", "key-1") }?.code == .clusterUnavailable)
            await refused.shutdown()
        }
    }
}

extension RedisClusterTopology.Node {
    /// The shard this master serves in `topology`.
    func shard(in topology: RedisClusterTopology) -> RedisClusterTopology.Shard {
        topology.shards.first { $0.master?.id == id }!
    }
}
