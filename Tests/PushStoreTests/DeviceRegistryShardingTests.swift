import APNsCore
import Redis
import Testing

@testable import PushStore

@Suite("Shards and scans")
struct DeviceRegistryShardingTests {
    let app = "shards"

    @Test func fnv1aKnownVectors() {
        // From the FNV reference test suite (32-bit FNV-1a).
        #expect(DeviceRegistryConfiguration.fnv1a32("".utf8) == 0x811c_9dc5)
        #expect(DeviceRegistryConfiguration.fnv1a32("a".utf8) == 0xe40c_292c)
        #expect(DeviceRegistryConfiguration.fnv1a32("foobar".utf8) == 0xbf9c_f968)
    }

    @Test func shardIsStableAndUsesTheAppsCount() throws {
        let configuration = DeviceRegistryConfiguration(defaultShardCount: 16, shardCountOverrides: ["big": 64])
        let mixedCase = try DeviceToken(hex: "ABCDEF0123")
        let lower = try DeviceToken(hex: "abcdef0123")
        #expect(configuration.shard(of: mixedCase, app: "x") == configuration.shard(of: lower, app: "x"))
        #expect(configuration.shard(of: lower, app: "x") == Int(DeviceRegistryConfiguration.fnv1a32("abcdef0123".utf8) % 16))
        #expect(configuration.shard(of: lower, app: "big") == Int(DeviceRegistryConfiguration.fnv1a32("abcdef0123".utf8) % 64))
        #expect(configuration.shardCount(for: "big") == 64)
        #expect(configuration.shardCount(for: "x") == 16)
    }

    @Test func tenThousandTokensSpreadAndScanOnce() async throws {
        let shardCount = 16
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: shardCount)) { registry, client in
            let tokens = (0..<10_000).map(token)
            try await registry.bind(tokens.map { DeviceRegistration(token: $0, environment: .production) }, app: app)

            // Each token is in exactly one shard set, the one its hash names.
            var perShard: [Set<String>] = []
            for shard in 0..<shardCount {
                perShard.append(try await client.members(ShardKeyspace(app: app, shard: shard).tokens(.production)))
            }
            #expect(perShard.map(\.count).reduce(0, +) == tokens.count)
            let shardSets = perShard
            for sample in tokens.prefix(500) {
                let holders = shardSets.indices.filter { shardSets[$0].contains(sample.hex) }
                #expect(holders == [registry.shard(of: sample, app: app)])
            }
            // Spread: no shard is empty or holds more than twice its share.
            let sizes = shardSets.map(\.count)
            #expect(sizes.min()! > 0)
            #expect(sizes.max()! < 2 * tokens.count / shardCount)

            // SSCAN with a small COUNT: many rounds, every token exactly once.
            var seen: [DeviceToken: Int] = [:]
            var rounds = 0
            for shard in 0..<shardCount {
                var cursor: UInt64 = 0
                repeat {
                    let page = try await registry.scanShard(app: app, shard: shard, environment: .production, cursor: cursor, count: 20)
                    for scanned in page.tokens {
                        seen[scanned, default: 0] += 1
                    }
                    cursor = page.cursor
                    rounds += 1
                } while cursor != 0
            }
            #expect(rounds > 200)
            #expect(seen.count == tokens.count)
            #expect(seen.values.allSatisfy { $0 == 1 })
            #expect(Set(seen.keys) == Set(tokens))
        }
    }

    @Test func scansAreFilteredByEnvironment() async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 4)) { registry, _ in
            let sandbox = (0..<50).map(token)
            let production = (50..<150).map(token)
            try await registry.bind(
                sandbox.map { DeviceRegistration(token: $0, environment: .sandbox, openID: "s-\($0.hex.suffix(4))") }
                    + production.map { DeviceRegistration(token: $0, environment: .production, openID: "p-\($0.hex.suffix(4))") },
                app: app
            )
            // One sandbox device moves to production.
            try await registry.bind(app: app, token: sandbox[0], environment: .production)

            var scanned: [APNsEnvironment: Set<DeviceToken>] = [:]
            for environment in APNsEnvironment.allCases {
                for shard in 0..<4 {
                    var cursor: UInt64 = 0
                    repeat {
                        let page = try await registry.scanShard(app: app, shard: shard, environment: environment, cursor: cursor, count: 7)
                        scanned[environment, default: []].formUnion(page.tokens)
                        cursor = page.cursor
                    } while cursor != 0
                }
            }
            #expect(scanned[.sandbox] == Set(sandbox.dropFirst()))
            #expect(scanned[.production] == Set(production).union([sandbox[0]]))
        }
    }
}
