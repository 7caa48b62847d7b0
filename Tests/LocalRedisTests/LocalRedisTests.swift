import Foundation
import LocalRedis
import Logging
import Redis
import Testing

/// The redis-server launchers the demo, the tests and the benchmarks stand on.
@Suite("Local redis-server processes", .serialized)
struct LocalRedisTests {
    static let logger = Logger(label: "pushfleet.test.local-redis")

    @Test("a server answers on its port with its password; stop ends its process")
    func serverStartsAndStops() async throws {
        let server = try await LocalRedisServer.start(password: "s3cret")
        let pid = try #require(await server.processIdentifier)
        let client = RedisClient(
            configuration: RedisConfiguration(host: server.host, port: server.port, password: "s3cret", poolSize: 1), logger: Self.logger)
        let pong = try await client.send("PING")
        #expect(pong == .status("PONG"))
        _ = try await client.send("SET", "k", "v")
        #expect(try await client.send("GET", "k") == .bulk(Array("v".utf8)))
        await client.shutdown()
        await server.stop()
        #expect(await server.processIdentifier == nil)
        // Stopped and reaped: no process has that id any more.
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
    }

    @Test("a cluster of 3 masters and 1 replica each covers every slot once")
    func clusterCoversEverySlot() async throws {
        let cluster = try await LocalRedisCluster.start(masters: 3, replicasPerMaster: 1)
        let topology = try await cluster.topology()
        await cluster.stop()
        #expect(cluster.seeds.count == 6)
        #expect(topology.masters.count == 3, "\(topology)")
        #expect(topology.coveredSlots == 16_384)
        #expect(topology.shards.allSatisfy { $0.nodes.count == 2 }, "a master and its replica per shard: \(topology)")
    }
}
