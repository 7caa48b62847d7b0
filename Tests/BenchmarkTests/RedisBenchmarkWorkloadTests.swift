import Redis
import Testing

@testable import PushFleetBenchmarks

/// What the Redis benchmark sends on a cluster: what `redis-benchmark --cluster` sends (each
/// connection on one master, its keys tagged for it), and the spread batches a registration's
/// writes look like.
@Suite struct RedisBenchmarkWorkloadTests {
    private let topology = RedisClusterTopology(shards: [
        shard(10_923...16_383, port: 7002), shard(0...5_460, port: 7000), shard(5_461...10_922, port: 7001),
    ])

    private static func shard(_ slots: ClosedRange<Int>, port: Int) -> RedisClusterTopology.Shard {
        RedisClusterTopology.Shard(
            slots: [slots],
            nodes: [.init(id: String(repeating: "a", count: 40), address: .init(host: "127.0.0.1", port: port), role: .master, health: "online")])
    }

    private func slot(_ argument: RedisArgument) -> Int { Int(RedisHashSlot(key: argument).rawValue) }

    @Test func eachMastersTagHashesIntoItsSlots() {
        let tags = RedisBenchmark.masterTags(topology)
        #expect(tags.count == 3)
        let ranges = [0...5_460, 5_461...10_922, 10_923...16_383]
        for (tag, range) in zip(tags, ranges) {
            #expect(range.contains(slot(.string("key:{\(tag)}:1"))), "\(tag)")
        }
    }

    @Test func onAClusterEachTasksBatchGoesToOneMasterAsRedisBenchmarksClientsDo() throws {
        let tags = RedisBenchmark.masterTags(topology)
        let workloads = RedisBenchmark.workloads(pipelineDepth: 100, tags: tags)
        #expect(workloads.map(\.name) == ["SET", "SADD", "SET spread"])
        #expect(workloads.map(\.reference) == ["SET", "SADD", "SET"])
        for workload in workloads.prefix(2) {
            #expect(workload.batches.count == 3, "one set of batches per master")
            let slotsPerTask = workload.batches.map { batches in Set(batches.flatMap { $0.map { slot($0[1]) } }) }
            #expect(slotsPerTask.allSatisfy { $0.count == 1 }, "\(workload.name)")
            #expect(Set(slotsPerTask.flatMap { $0 }).count == 3, "\(workload.name): the three masters")
            #expect(workload.batches.allSatisfy { $0.allSatisfy { $0.count == 100 } })
        }
        let spread = try #require(workloads.last)
        let ranges = [0...5_460, 5_461...10_922, 10_923...16_383]
        for batch in spread.batches[0] {
            let perMaster = ranges.map { range in batch.filter { range.contains(slot($0[1])) }.count }
            #expect(perMaster.allSatisfy { $0 > 10 }, "a spread batch reaches every master: \(perMaster)")
        }
    }

    @Test func everyWorkloadRunsOnBothExecutorsAgainstTheSameReference() {
        let workloads = RedisBenchmark.onBothExecutors(RedisBenchmark.workloads(pipelineDepth: 100, tags: nil))
        #expect(workloads.map(\.name) == ["SET", "SADD", "SET on the loop", "SADD on the loop"])
        #expect(workloads.map(\.onEventLoop) == [false, false, true, true])
        #expect(workloads.map(\.reference) == ["SET", "SADD", "SET", "SADD"])
        #expect(workloads[0].batches == workloads[2].batches)
    }

    @Test func oneServerGetsRedisBenchmarksDefaultCommands() {
        let workloads = RedisBenchmark.workloads(pipelineDepth: 100, tags: nil)
        #expect(workloads.map(\.name) == ["SET", "SADD"])
        #expect(workloads[0].batches == [[Array(repeating: ["SET", "key:__rand_int__", "xxx"], count: 100)]])
    }
}
