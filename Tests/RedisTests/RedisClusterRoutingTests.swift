import Redis
import Testing

/// Hash slots, the `CLUSTER SHARDS` reader and the router's decisions, without a server.
@Suite("Redis Cluster routing rules")
struct RedisClusterRoutingTests {
    @Test("CRC16/XMODEM and hash slots as Redis computes them")
    func slots() {
        // The check value of CRC16/XMODEM, and slots from the Redis Cluster specification.
        #expect(RedisHashSlot(key: "123456789").rawValue == 0x31C3 & 0x3FFF)
        #expect(RedisHashSlot(key: "foo").rawValue == 12_182)
        #expect(RedisHashSlot(key: "bar").rawValue == 5_061)
        #expect(RedisHashSlot(key: "{user1000}.following") == RedisHashSlot(key: "{user1000}.followers"))
        #expect(RedisHashSlot(key: "{user1000}.following") == RedisHashSlot(key: "user1000"))
        #expect(RedisHashSlot(key: "foo{}{bar}") != RedisHashSlot(key: "bar"), "an empty tag: the whole key is hashed")
        #expect(RedisHashSlot(key: "foo{{bar}}zap") == RedisHashSlot(key: "{bar"), "the tag ends at the first } after the first {")
        #expect(RedisHashSlot(key: "foo{bar}{zap}") == RedisHashSlot(key: "bar"))
        #expect(RedisHashSlot(key: "pf:{news:7}:tokens:sandbox") == RedisHashSlot(key: "news:7"))
        #expect(RedisHashSlot(key: .bytes(Array("{a}b".utf8))) == RedisHashSlot(key: "a"))
        #expect(RedisHashSlot(rawValue: 16_384) == nil && RedisHashSlot(rawValue: 16_383)?.rawValue == 16_383)
    }

    static func node(_ id: String, _ port: Int, role: String, endpoint: String = "127.0.0.1", health: String = "online") -> RedisReply {
        .array([
            .bulk(Array("id".utf8)), .bulk(Array(id.utf8)), .bulk(Array("port".utf8)), .integer(Int64(port)),
            .bulk(Array("ip".utf8)), .bulk(Array("10.0.0.\(port % 100)".utf8)), .bulk(Array("endpoint".utf8)), .bulk(Array(endpoint.utf8)),
            .bulk(Array("role".utf8)), .bulk(Array(role.utf8)), .bulk(Array("replication-offset".utf8)), .integer(72),
            .bulk(Array("health".utf8)), .bulk(Array(health.utf8)),
        ])
    }

    @Test("CLUSTER SHARDS: slot ranges as integers or as strings (Redis 7.0), nodes, the endpoint or else the ip")
    func shards() throws {
        let reply = RedisReply.array([
            .array([
                .bulk(Array("slots".utf8)), .array([.integer(0), .integer(5460), .integer(10923), .integer(10925)]),
                .bulk(Array("nodes".utf8)), .array([Self.node("a", 7001, role: "master"), Self.node("d", 7004, role: "replica")]),
            ]),
            .array([
                .bulk(Array("slots".utf8)), .array([.bulk(Array("5461".utf8)), .bulk(Array("10922".utf8))]),
                .bulk(Array("nodes".utf8)), .array([Self.node("b", 7002, role: "master", endpoint: "?")]),
            ]),
            .array([
                .bulk(Array("slots".utf8)), .array([.integer(10926), .integer(16383)]),
                .bulk(Array("nodes".utf8)), .array([Self.node("c", 7003, role: "master", health: "failed"), Self.node("f", 7006, role: "replica")]),
            ]),
        ])
        let topology = try RedisClusterTopology(clusterShards: reply)
        #expect(topology.shards.map(\.slots) == [[0...5460, 10923...10925], [5461...10922], [10926...16383]])
        #expect(topology.masters.map(\.id) == ["a", "b", "c"])
        #expect(topology.masters[1].address == RedisClusterTopology.Address(host: "10.0.0.2", port: 7002), "endpoint '?': the ip")
        #expect(topology.masters[2].health == "failed")
        #expect(topology.coveredSlots == 16_384)
        #expect(throws: RedisClientError.self) { try RedisClusterTopology(clusterShards: .array([.bulk(Array("slots".utf8))])) }
        #expect(throws: RedisClientError.self) { try RedisClusterTopology(clusterShards: .error("ERR unknown command")) }
    }

    @Test("error answers that concern the cluster, and others")
    func redirections() {
        typealias Redirection = RedisClusterRouter.Redirection
        let address = RedisClusterTopology.Address(host: "127.0.0.1", port: 7002)
        #expect(Redirection(errorMessage: "MOVED 3999 127.0.0.1:7002") == .moved(slot: RedisHashSlot(rawValue: 3999)!, to: address))
        #expect(Redirection(errorMessage: "ASK 12 127.0.0.1:7002") == .ask(slot: RedisHashSlot(rawValue: 12)!, to: address))
        #expect(
            Redirection(errorMessage: "MOVED 3999 [::1]:7002") == .moved(slot: RedisHashSlot(rawValue: 3999)!, to: .init(host: "[::1]", port: 7002)))
        for word in [
            "TRYAGAIN Multiple keys request during rehashing of slot", "CLUSTERDOWN The cluster is down", "LOADING Redis is loading",
            "MASTERDOWN Link with MASTER is down",
        ] {
            #expect(Redirection(errorMessage: word) == .notReady(String(word.prefix { $0 != " " })))
        }
        for other in [
            "ERR unknown command", "WRONGTYPE Operation against a key", "MOVED x y", "MOVED 99999 127.0.0.1:7002", "NOSCRIPT No matching script",
        ] {
            #expect(Redirection(errorMessage: other) == nil, "\(other)")
        }
    }

    @Test("MOVED updates the map and goes there; ASK goes there once; not ready backs off; a bound ends it")
    func decisions() {
        var router = RedisClusterRouter(maxRedirections: 4, retryBase: .milliseconds(10), retryMax: .milliseconds(40))
        let a = RedisClusterTopology.Address(host: "127.0.0.1", port: 7001)
        let b = RedisClusterTopology.Address(host: "127.0.0.1", port: 7002)
        router.update(
            RedisClusterTopology(shards: [.init(slots: [0...16_383], nodes: [.init(id: "a", address: a, role: .master, health: "online")])]))
        let slot = RedisHashSlot(rawValue: 100)!
        #expect(router.node(for: slot) == a && router.knownSlots == 16_384)

        #expect(router.decide(after: .ask(slot: slot, to: b), attempt: 1) == .send(to: b, asking: true))
        #expect(router.node(for: slot) == a, "ASK leaves the map alone")
        #expect(router.decide(after: .moved(slot: slot, to: b), attempt: 2) == .send(to: b, asking: false))
        #expect(router.node(for: slot) == b, "MOVED updates the map")
        #expect(router.node(for: RedisHashSlot(rawValue: 101)!) == a, "only that slot")

        #expect(router.decide(after: .notReady("TRYAGAIN"), attempt: 1) == .retry(after: .milliseconds(10), refresh: false))
        #expect(router.decide(after: .notReady("CLUSTERDOWN"), attempt: 2) == .retry(after: .milliseconds(20), refresh: true))
        #expect(router.decide(after: .notReady("MASTERDOWN"), attempt: 4) == .retry(after: .milliseconds(40), refresh: true))
        #expect(router.decide(after: .notReady("LOADING"), attempt: 5) == .giveUp)
        #expect(router.decide(after: .moved(slot: slot, to: a), attempt: 5) == .giveUp)
        #expect(router.decideAfterUnreachableNode(attempt: 3) == .retry(after: .milliseconds(40), refresh: true))
        #expect(router.decideAfterUnreachableNode(attempt: 5) == .giveUp)
    }
}
