import APNsCore
import Redis
import Testing

@testable import PushStore

@Suite("Bulk bind")
struct DeviceRegistryBulkTests {
    @Test func hundredThousandDevicesAddUp() async throws {
        let app = "bulk"
        let count = 100_000
        // Every 4th device is sandbox, every 10th has a user, every 5th carries "vip".
        let devices = (0..<count).map { number in
            DeviceRegistration(
                token: token(number),
                environment: number.isMultiple(of: 4) ? .sandbox : .production,
                openID: number.isMultiple(of: 10) ? "user-\(number)" : nil,
                tags: number.isMultiple(of: 5) ? ["vip", "all"] : ["all"],
                registeredAt: 1_000 + Int64(number)
            )
        }
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 16, bulkBatchSize: 2_000)) { registry, _ in
            try await registry.bind(devices, app: app)
            #expect(try await registry.deviceCount(app: app) == DeviceCount(sandbox: count / 4, production: count - count / 4))
            #expect(try await registry.appTags(app: app) == ["all": count, "vip": count / 5])
            let resolution = try await registry.resolveOpenIDs(
                app: app,
                environment: .production,
                openIDs: (0..<count / 10).map { "user-\($0 * 10)" }
            )
            // user-n with n a multiple of 20 sits on a sandbox device (multiples of 4 and 10).
            #expect(resolution.tokens.count == count / 10 - count / 20)
            #expect(resolution.otherEnvironmentCount == count / 20)
            #expect(resolution.unknownCount == 0)
            #expect(try await registry.device(app: app, token: token(12_345))?.registeredAt == 13_345)
        }
    }

    @Test func devicesOfManyBatchesAreBoundShardByShardInFewScriptCalls() async throws {
        let app = "many-shards"
        let count = 20_000
        let devices = (0..<count).map { DeviceRegistration(token: token($0), environment: .production, openID: nil, tags: [], registeredAt: 5) }
        let configuration = DeviceRegistryConfiguration(defaultShardCount: 64, bulkBatchSize: 1_000, bulkConcurrency: 3)
        try await withRegistry(configuration: configuration) { registry, client in
            try await registry.bind(devices, app: app)
            // A pipeline sent before a server knows the script fails each call with NOSCRIPT
            // (and sends it again): only the calls that ran count.
            let calls = try await client.evalshaCalls() - client.commandCalls("evalsha", failed: true)
            // Lined up by shard, a batch of 1,000 touches about 4 of the 64 shards: at most one call
            // per shard and one more per batch (where a shard's run is cut), plus the layout's
            // creation. Batches of devices in their given order would make 20 × 64 calls.
            #expect(calls <= 64 + count / 1_000 + 1, "\(calls) script calls")
            #expect(try await registry.deviceCount(app: app) == DeviceCount(sandbox: 0, production: count))
            for number in stride(from: 0, to: count, by: 997) {
                #expect(try await registry.device(app: app, token: token(number))?.registeredAt == 5, "device \(number)")
            }
        }
    }
}
