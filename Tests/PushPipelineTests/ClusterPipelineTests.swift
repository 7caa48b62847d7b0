import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import LocalRedis
import PipelineTestSupport
import PushConfiguration
import PushCore
import PushJobs
import PushPipeline
import PushStore
import Redis
import Testing

/// The pipeline with its state on a real Redis Cluster (3 masters, 3 replicas, started by the
/// tests): a campaign of every audience kind in-process, then worker processes through a
/// resharding and a failover mid-campaign.
@Suite("Pipeline on a Redis Cluster", .serialized)
struct ClusterPipelineTests {
    typealias Stack = PipelineStack

    static var clusterOptions: Stack.Options {
        var options = Stack.Options()
        options.redisClusterMasters = 3
        options.redisReplicas = 1
        return options
    }

    @Test("broadcast, openids and tags on a cluster: each valid device once, uninstalled ones removed")
    func audiences() async throws {
        let total = 20_000
        let tokens = (0..<total).map(Stack.token)
        let uninstalled = stride(from: 0, to: total, by: 100).map { tokens[$0] }
        try await Stack.with(
            Self.clusterOptions,
            simulator: { $0.devices.unregistered = Dictionary(uniqueKeysWithValues: uninstalled.map { ($0.hex, 5_000) }) }
        ) { stack in
            try await stack.register(tokens, tags: ["all"])
            try await stack.registry.bind(app: Stack.app, token: Stack.token(1), environment: .sandbox, openID: "u1", tags: ["all", "vip"])
            try await stack.registry.bind(app: Stack.app, token: Stack.token(2), environment: .sandbox, openID: "u2", tags: ["all", "vip"])
            try await stack.withWorker { counters in
                try await stack.publish(Stack.job(id: "cluster-broadcast", audience: .broadcast))
                let broadcast = try await eventually("the broadcast and its removals") {
                    try await stack.report("cluster-broadcast")
                } until: {
                    $0.isComplete && $0.removed == uninstalled.count
                }
                #expect(broadcast.accepted == total - uninstalled.count)
                #expect(broadcast.control.breaker == .cleared)
                let (missed, sentTwice) = coverage(of: tokens.filter { !Set(uninstalled).contains($0) }, try await stack.simulator.counters())
                #expect(missed.isEmpty && sentTwice == 0)
                #expect(try await stack.registry.deviceCount(app: Stack.app).sandbox == total - uninstalled.count)

                try await stack.simulator.reset()
                try await stack.publish(Stack.job(id: "cluster-openids", audience: .openIDs(["u1", "u2", "nobody"])))
                let openIDs = try await eventually("the openid job") {
                    try await stack.report("cluster-openids")
                } until: {
                    $0.isComplete
                }
                #expect(openIDs.targeted == 2 && openIDs.unknownOpenIDs == 1)
                try await stack.publish(Stack.job(id: "cluster-tags", audience: .tags(TagExpression(all: ["vip"]))))
                _ = try await eventually("the tag job") {
                    try await stack.report("cluster-tags")
                } until: {
                    $0.isComplete
                }
                #expect(try await stack.simulator.counters().acceptedPerToken == [Stack.token(1).hex: 2, Stack.token(2).hex: 2])
                #expect(counters[.feedbackRemoved] == uninstalled.count)
            }
        }
    }

    @Test("resharding mid-campaign (slots holding the app's shards move): nothing missed, nothing sent twice")
    func reshardingMidCampaign() async throws {
        try await Self.campaign("reshard") { stack, cluster in
            // `redis-cli --cluster reshard` moves a master's slots from the start of its range:
            // take the master whose range starts nearest to one of the app's shard slots, and
            // move its slots up to that one (a few hundred, so that it is done mid-campaign).
            let topology = try await cluster.topology()
            let shardSlots = (0..<stack.configuration.registry.shards).map { Int(RedisHashSlot(key: "\(Stack.app):\($0)").rawValue) }
            let candidates = topology.masters.compactMap { master -> (master: RedisClusterTopology.Node, first: Int, moving: Int)? in
                guard let range = master.shard(in: topology).slots.first, let slot = shardSlots.filter(range.contains).min() else { return nil }
                return (master, range.lowerBound, slot)
            }
            let (source, first, moving) = try #require(candidates.min { $0.moving - $0.first < $1.moving - $1.first })
            let target = try #require(topology.masters.first { $0.id != source.id })
            try await cluster.reshard(slots: moving - first + 1, from: source.address, to: target.address)
            let after = try await cluster.topology()
            #expect(!source.shard(in: after).slots.contains { $0.contains(moving) }, "the shard's slot moved")
            return "\(moving - first + 1) slots moved (shard slot \(moving))"
        } check: { missed, sentTwice in
            #expect(missed == 0)
            #expect(sentTwice == 0)
        }
    }

    @Test("failover mid-campaign (SIGKILL a master, its replica takes over): the campaign completes, nothing missed")
    func failoverMidCampaign() async throws {
        try await Self.campaign("failover") { _, cluster in
            // The master of the job's own state: its markers and statistics must survive.
            let topology = try await cluster.topology()
            let jobSlot = Int(RedisHashSlot(key: "job:failover").rawValue)
            let victim = try #require(topology.masters.first { $0.shard(in: topology).slots.contains { $0.contains(jobSlot) } })
            await cluster.kill(victim.address)
            return "master \(victim.address) killed"
        } check: { missed, sentTwice in
            #expect(missed == 0)
            // At most what was in flight on the lost connections (two workers' windows of 2,000).
            #expect(sentTwice <= 4_000)
        }
    }

    @Test(
        "the registry's shard count raised mid-campaign (pushfleet registry reshard): nothing missed, nothing sent twice",
        arguments: ["single node", "cluster"])
    func registryReshardMidCampaign(redis: String) async throws {
        var reshard: Task<DeviceRegistry.ReshardReport, any Error>?
        try await Self.campaign("registry-reshard", options: redis == "cluster" ? Self.clusterOptions : Stack.Options()) { stack in
            let shards = try await stack.registry.layout(app: Stack.app).shards
            let registry = stack.registry
            reshard = Task { try await registry.reshard(app: Stack.app, to: shards * 4) }
            // Under way once the new epoch is entered: devices start moving.
            let layout = try await eventually("the reshard to start") {
                try await registry.refreshLayout(app: Stack.app)
            } until: {
                $0.migratingFrom != nil
            }
            return "\(redis): \(layout)"
        } settle: { stack in
            let stillRunning = try await stack.registry.refreshLayout(app: Stack.app).migratingFrom != nil
            let report = try #require(try await reshard?.value)
            #expect(report.after.shards == report.before.shards * 4 && report.after.migratingFrom == nil)
            print(
                "registry reshard: \(report.before) → \(report.after), \(report.devicesMoved) devices moved; still running when the campaign completed: \(stillRunning)"
            )
        } check: { missed, sentTwice in
            #expect(missed == 0)
            #expect(sentTwice == 0)
        }
    }

    /// ``campaign(_:options:fault:check:)`` on a cluster of 3 masters and 3 replicas, the
    /// fault done to the cluster.
    static func campaign(
        _ jobID: String, fault: @escaping (PipelineStack, LocalRedisCluster) async throws -> String, check: (Int, Int) -> Void
    ) async throws {
        try await campaign(
            jobID, options: clusterOptions,
            fault: { stack in
                try await fault(stack, try #require(stack.stack.redisCluster))
            }, check: check)
    }

    /// A 100,000-device broadcast through two worker processes, with `fault` done once a tenth
    /// is accepted (while the campaign runs) and `settle` once it completed; `check` gets the
    /// tokens missed and the notifications sent twice.
    static func campaign(
        _ jobID: String, options: Stack.Options, fault: (PipelineStack) async throws -> String,
        settle: (PipelineStack) async throws -> Void = { _ in }, check: (Int, Int) -> Void
    ) async throws {
        let total = 100_000
        let tokens = (0..<total).map(Stack.token)
        try await Stack.with(options, simulator: { $0.latency = .uniform(.milliseconds(2), .milliseconds(6)) }) { stack in
            try await stack.register(tokens)
            let workers = [try WorkerProcess.start(stack: stack, observable: true), try WorkerProcess.start(stack: stack, observable: true)]
            defer { workers.forEach { $0.forceStop() } }
            // Both workers in their groups first: a worker joining mid-campaign moves partitions,
            // and what was in progress on them can be read and sent again (the at-least-once of a
            // rebalance), which the faults below must not be blamed for. Once, a campaign was
            // expanded again that way (189,085 devices skipped by markers, 49 sent twice).
            try await WorkerProcess.awaitGroups(workers, stack: stack)
            try await stack.publish(Stack.job(id: jobID, audience: .broadcast))
            let startedAt = try await eventually("the campaign to be under way") {
                try await stack.simulator.counters().accepted
            } until: {
                $0 >= total / 10
            }
            let what = try await fault(stack)
            let faultDoneAt = try await stack.simulator.counters().accepted
            #expect(faultDoneAt < total, "the fault was done while the campaign ran (\(faultDoneAt) accepted by then)")
            let report = try await eventually("the campaign to finish", timeout: .seconds(300)) {
                try await stack.report(jobID)
            } until: {
                $0.isComplete
            }
            try await settle(stack)
            let (missed, sentTwice) = coverage(of: tokens, try await stack.simulator.counters())
            print(
                "\(jobID) mid-campaign: \(what) between \(startedAt) and \(faultDoneAt) acceptances; \(missed.count) missed, \(sentTwice) sent twice, \(report.duplicatesSkipped) skipped by markers"
            )
            #expect(report.accepted == total)
            check(missed.count, sentTwice)
            for worker in workers { try await worker.stopGracefully() }
        }
    }
}

extension RedisClusterTopology.Node {
    /// The shard this master serves in `topology`.
    func shard(in topology: RedisClusterTopology) -> RedisClusterTopology.Shard {
        topology.shards.first { $0.master?.id == id }!
    }
}
