import APNsCore
import PushCore
import Redis
import Testing

@testable import PushStore

@Suite("Users, app-wide tag removal and the device walk")
struct DeviceRegistryUserTests {
    let app = "com.example.news"

    @Test("a user is looked up by openid; logging out keeps the device, its tags and its audiences")
    func logOut() async throws {
        try await withRegistry { registry, client in
            let (a, b) = (token(1), token(2))
            try await registry.bind(app: app, token: a, environment: .production, openID: "U", tags: ["vip"])
            try await registry.bind(app: app, token: b, environment: .production, openID: "V")
            #expect(try await registry.user(app: app, openID: "U")?.token == a)
            #expect(try await registry.user(app: app, openID: "nobody") == nil)

            #expect(try await registry.logOut(app: app, openID: "U") == a)
            #expect(try await registry.user(app: app, openID: "U") == nil)
            #expect(try await registry.mappedToken(app: app, openID: "U", client: client) == nil)
            let device = try #require(try await registry.device(app: app, token: a))
            #expect(device.openID == nil && device.tags == ["vip"] && device.environment == .production)
            #expect(try await registry.audienceTokens(app: app, environment: .production) == [a, b])
            let resolution = try await registry.resolveOpenIDs(app: app, environment: .production, openIDs: ["U", "V"])
            #expect(resolution.tokens == [b] && resolution.unknownCount == 1)
            #expect(try await registry.logOut(app: app, openID: "U") == nil, "a second logout finds nobody")

            // The user logs in again, on the same device: it is their device again.
            try await registry.bind(app: app, token: a, environment: .production, openID: "U")
            #expect(try await registry.user(app: app, openID: "U")?.token == a)
            #expect(await registryError { try await registry.logOut(app: app, openID: "") }?.field == "openID")
        }
    }

    @Test("a login that lands after the logout read its binding wins")
    func newerLoginWins() async throws {
        try await withRegistry { registry, client in
            let (a, b) = (token(1), token(2))
            try await registry.bind(app: app, token: a, environment: .sandbox, openID: "U")
            let stale = try #require(try await client.send(["GET", .string(openIDKey(app: app, openID: "U"))]).string)
            // U logs in on b, then again on a: a now holds a newer generation of U.
            try await registry.bind(app: app, token: b, environment: .sandbox, openID: "U")
            try await registry.bind(app: app, token: a, environment: .sandbox, openID: "U")
            // A logout that read U's first binding (set back here, as if read before both logins).
            let current = try #require(try await client.send(["GET", .string(openIDKey(app: app, openID: "U"))]).string)
            #expect(current != stale)
            _ = try await client.send(["SET", .string(openIDKey(app: app, openID: "U")), .string(stale)])
            #expect(try await registry.logOut(app: app, openID: "U") == nil)
            #expect(try await registry.device(app: app, token: a)?.openID == "U", "the newer login is kept")
        }
    }

    @Test("a tag leaves every device that carries it, in every shard and environment, suspect ones too")
    func removeTagEverywhere() async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 4)) { registry, _ in
            let tokens = (1...300).map(token)
            for (index, device) in tokens.enumerated() {
                let tags = index.isMultiple(of: 3) ? ["sale", "sports"] : ["sports"]
                try await registry.bind(app: app, token: device, environment: index.isMultiple(of: 2) ? .sandbox : .production, tags: tags)
            }
            try await registry.bind(app: "com.example.other", token: tokens[0], environment: .sandbox, tags: ["sale"])
            #expect(
                try await registry.markSuspect(app: app, token: tokens[3], environment: .production, reason: "BadDeviceToken", at: 2_000_000_000_000))
            #expect(try await registry.appTags(app: app) == ["sale": 100, "sports": 300])

            #expect(try await registry.removeTagFromEveryDevice(app: app, tag: "sale") == 100)
            #expect(try await registry.appTags(app: app) == ["sports": 300])
            #expect(try await registry.device(app: app, token: tokens[3])?.tags == ["sports"])
            let filter = ScanFilter.tags(TagExpression(all: ["sale"]))
            #expect(try await registry.audienceTokens(app: app, environment: .sandbox, filter: filter).isEmpty)
            #expect(try await registry.appTags(app: "com.example.other") == ["sale": 1], "another app keeps its tag")
            #expect(try await registry.removeTagFromEveryDevice(app: app, tag: "sale") == 0)
            #expect(try await registry.removeTagFromEveryDevice(app: app, tag: "never-seen") == 0)
            #expect(await registryError { try await registry.removeTagFromEveryDevice(app: app, tag: "") }?.field == "tag")
        }
    }

    @Test("a small app's walk reads each shard in a few large groups of buckets, not 64 groups of 16")
    func smallAppWalkReadsFewGroups() async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 16)) { registry, client in
            let tokens = (1...40).map(token)
            for device in tokens {
                try await registry.bind(app: app, token: device, environment: .production, tags: ["all"])
            }
            // The layout read and the scripts loaded before counting.
            try await registry.forEachDevice(app: app) { _ in }
            let before = try await client.evalshaCalls()
            var seen: [DeviceToken] = []
            try await registry.forEachDevice(app: app) { page in seen += page.map(\.token) }
            let reads = try await client.evalshaCalls() - before
            #expect(Set(seen) == Set(tokens) && seen.count == tokens.count)
            // Per shard: groups of 16, 32, 64, 128, 256, 256, 256 and the last 16 buckets.
            #expect(reads <= 16 * 8, "\(reads) reads for 16 shards of 1,024 buckets")
            #expect(reads >= 16)
        }
    }

    @Test("the walk passes every device once, with its record, across shards and during a reshard's aftermath")
    func walk() async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 2)) { registry, _ in
            let tokens = (1...500).map(token)
            for (index, device) in tokens.enumerated() {
                try await registry.bind(
                    app: app, token: device, environment: index < 250 ? .sandbox : .production,
                    openID: index.isMultiple(of: 5) ? "user-\(index)" : nil, tags: index.isMultiple(of: 7) ? ["seven"] : [])
            }
            func walked() async throws -> [DeviceToken: DeviceRecord] {
                var seen: [DeviceToken: DeviceRecord] = [:]
                var duplicates = 0
                try await registry.forEachDevice(app: app) { page in
                    for record in page where seen.updateValue(record, forKey: record.token) != nil { duplicates += 1 }
                }
                #expect(duplicates == 0)
                return seen
            }
            let before = try await walked()
            #expect(Set(before.keys) == Set(tokens))
            for device in [tokens[0], tokens[7], tokens[255], tokens[499]] {
                #expect(before[device] == (try await registry.device(app: app, token: device)))
            }
            _ = try await registry.reshard(app: app, to: 8)
            #expect(try await walked() == before)
            var none = 0
            try await registry.forEachDevice(app: "com.example.empty") { none += $0.count }
            #expect(none == 0)
        }
    }
}
