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
}
