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

    @Test func shardIsStableAndUsesTheAppsCount() async throws {
        let mixedCase = try DeviceToken(hex: "ABCDEF0123")
        let lower = try DeviceToken(hex: "abcdef0123")
        let layout = RegistryLayout(shards: 16)
        #expect(layout.home(of: mixedCase) == layout.home(of: lower))
        #expect(layout.home(of: lower) == Int(DeviceRegistryConfiguration.fnv1a32("abcdef0123".utf8) % 16))
        #expect(RegistryLayout(shards: 64).home(of: lower) == Int(DeviceRegistryConfiguration.fnv1a32("abcdef0123".utf8) % 64))
        let configuration = DeviceRegistryConfiguration(defaultShardCount: 16, shardCountOverrides: ["big": 64])
        #expect(configuration.shardCount(for: "big") == 64)
        #expect(configuration.shardCount(for: "x") == 16)
        // The configured count is the app's until its layout is stored; the stored one wins.
        try await withRegistry(configuration: configuration) { registry, _ in
            #expect(try await registry.layout(app: "big") == RegistryLayout(shards: 64))
            try await registry.bind(app: "x", token: lower, environment: .production)
            #expect(try await registry.layout(app: "x") == RegistryLayout(shards: 16))
            let other = DeviceRegistry(client: registry.client, configuration: DeviceRegistryConfiguration(defaultShardCount: 4))
            #expect(try await other.layout(app: "x") == RegistryLayout(shards: 16))
            #expect(try await other.device(app: "x", token: lower) != nil)
        }
    }

    @Test func tenThousandTokensSpreadAndScanOnce() async throws {
        let shardCount = 16
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: shardCount)) { registry, client in
            let tokens = (0..<10_000).map(token)
            try await registry.bind(tokens.map { DeviceRegistration(token: $0, environment: .production) }, app: app)
            let layout = try await registry.layout(app: app)

            // Each token is in its home shard, in the bucket its binary form names.
            for sample in tokens.prefix(300) {
                let keys = ShardKeyspace(app: app, shard: layout.home(of: sample))
                #expect(try await client.send("HEXISTS", .string(keys.bucket(of: sample)), .bytes(sample.markerBytes)) == .integer(1))
                let elsewhere = ShardKeyspace(app: app, shard: (layout.home(of: sample) + 1) % shardCount)
                #expect(try await client.send("HEXISTS", .string(elsewhere.bucket(of: sample)), .bytes(sample.markerBytes)) == .integer(0))
            }

            // Small pages: many rounds, every token exactly once, each in its home shard's task.
            var seen: [DeviceToken: Int] = [:]
            var sizes: [Int] = []
            var rounds = 0
            for shard in 0..<shardCount {
                var cursor: UInt64 = 0
                var size = 0
                repeat {
                    let page = try await registry.scanShard(app: app, shard: shard, environment: .production, cursor: cursor, count: 20)
                    for scanned in page.tokens {
                        seen[scanned, default: 0] += 1
                        #expect(layout.home(of: scanned) == shard)
                    }
                    size += page.tokens.count
                    cursor = page.cursor
                    rounds += 1
                } while cursor != 0
                sizes.append(size)
            }
            #expect(rounds > 200)
            #expect(seen.count == tokens.count)
            #expect(seen.values.allSatisfy { $0 == 1 })
            #expect(Set(seen.keys) == Set(tokens))
            // Spread: no shard is empty or holds more than twice its share.
            #expect(sizes.min()! > 0)
            #expect(sizes.max()! < 2 * tokens.count / shardCount)
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

    @Test func idsAreHandedOutInTheirBucketsLayers() async throws {
        let shardCount = 4
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: shardCount)) { registry, client in
            let tokens = (0..<20_000).map(token)
            // In two calls, so that sequences carry over from one call to the next.
            try await registry.bind(tokens.prefix(12_000).map { DeviceRegistration(token: $0, environment: .production) }, app: app)
            try await registry.bind(tokens.dropFirst(12_000).map { DeviceRegistration(token: $0, environment: .production) }, app: app)
            let layout = try await registry.layout(app: app)
            #expect(layout.ids == .bucketed)
            let records = try await registry.records(app: app, tokens: tokens)
            // Per (shard, bucket), the ids are the layers' offsets for sequences 1, 2, 3, … in some order.
            var offsets: [[Int]: [Int]] = [:]
            for (sample, record) in zip(tokens, records) {
                let id = try #require(record).id
                #expect(id >= DeviceIDForm.bucketedBase)
                offsets[[layout.home(of: sample), ShardKeyspace.bucketIndex(of: sample)], default: []].append(Int(id - DeviceIDForm.bucketedBase))
            }
            for (place, found) in offsets {
                let expected = (1...found.count).map { DeviceIDForm.offset(sequence: $0, bucket: place[1], shard: place[0], shards: shardCount) }
                #expect(found.sorted() == expected.sorted(), "\(place)")
            }

            // A scan page of 1,000 devices touches a few ranges of a job's sent state.
            let page = try await registry.scanShard(app: app, shard: 1, environment: .production, cursor: 0, count: 1_000)
            #expect(page.tokens.count >= 1_000)
            let ranges = Set(page.ids.prefix(1_000).map { $0 / 65_536 })
            #expect(ranges.count <= 4, "\(ranges.count) ranges")
        }
    }
}
