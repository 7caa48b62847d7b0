import APNsCore
import PushCore
import Redis
import Testing

@testable import PushStore

@Suite("Tag audiences and openid resolution")
struct DeviceRegistryExpansionTests {
    let app = "audience"

    /// Binds 60 devices in one shard (shard count 1) with tags by residue:
    /// `even` / `odd`, `three` for multiples of 3, `five` for multiples of 5; numbers ≥ 50 are sandbox.
    private func populate(_ registry: DeviceRegistry) async throws {
        var devices: [DeviceRegistration] = []
        for number in 0..<60 {
            var tags = [number.isMultiple(of: 2) ? "even" : "odd"]
            if number.isMultiple(of: 3) { tags.append("three") }
            if number.isMultiple(of: 5) { tags.append("five") }
            devices.append(DeviceRegistration(token: token(number), environment: number < 50 ? .production : .sandbox, tags: tags))
        }
        try await registry.bind(devices, app: app)
    }

    /// The numbers of the devices a tag scan of `expression` reaches, 5 per page.
    private func collect(_ registry: DeviceRegistry, _ environment: APNsEnvironment, _ expression: TagExpression) async throws -> Set<Int> {
        let found = try await registry.audience(app: app, environment: environment, filter: .tags(expression), count: 5)
        return Set(found.keys.map { Int($0.hex, radix: 16)! })
    }

    private func expected(_ environment: APNsEnvironment, _ predicate: (Int) -> Bool) -> Set<Int> {
        Set((environment == .production ? 0..<50 : 50..<60).filter(predicate))
    }

    @Test(arguments: [
        ("all", TagExpression(all: ["even", "three"])),
        ("any", TagExpression(any: ["three", "five"])),
        ("all+any", TagExpression(all: ["odd"], any: ["three", "five"])),
        ("all+none", TagExpression(all: ["even"], none: ["three"])),
        ("any+none", TagExpression(any: ["three", "five"], none: ["even"])),
        ("all+any+none", TagExpression(all: ["even"], any: ["three", "five"], none: ["three"])),
        ("unknown tag", TagExpression(all: ["even", "nobody"])),
        ("unknown any", TagExpression(any: ["nobody", "five"])),
    ])
    func expressions(name: String, expression: TagExpression) async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 1)) { registry, client in
            try await populate(registry)
            func tags(_ number: Int) -> Set<String> {
                var tags: Set<String> = [number.isMultiple(of: 2) ? "even" : "odd"]
                if number.isMultiple(of: 3) { tags.insert("three") }
                if number.isMultiple(of: 5) { tags.insert("five") }
                return tags
            }
            for environment in APNsEnvironment.allCases {
                let want = expected(environment) { number in
                    let carried = tags(number)
                    return expression.all.allSatisfy(carried.contains)
                        && (expression.any.isEmpty || expression.any.contains(where: carried.contains))
                        && !expression.none.contains(where: carried.contains)
                }
                let keysBefore = try await client.keyCount()
                let got = try await collect(registry, environment, expression)
                #expect(got == want, "\(name) \(environment)")
                #expect(try await client.keyCount() == keysBefore, "a scan writes nothing")
            }
        }
    }

    @Test func scanPagesHoldTheDevicesIDs() async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 1)) { registry, _ in
            try await populate(registry)
            let all = try await registry.audience(app: app, environment: .production)
            let even = try await registry.audience(app: app, environment: .production, filter: .tags(TagExpression(all: ["even"])))
            #expect(all.count == 50 && even.count == 25)
            #expect(Set(all.values).count == 50, "ids are unique")
            for (token, id) in even {
                #expect(all[token] == id, "a device has one id whatever the filter")
                #expect(try await registry.records(app: app, tokens: [token])[0]?.id == id)
            }
        }
    }

    @Test func invalidExpressionsAreRefused() async throws {
        try await withRegistry { registry, _ in
            let empty = await registryError {
                try await registry.scanShard(
                    app: app, shard: 0, environment: .production, filter: .tags(TagExpression(none: ["x"])), cursor: 0, count: 10)
            }
            #expect(empty?.code == .invalidTagExpression)
            let badTag = await registryError {
                try await registry.scanShard(
                    app: app, shard: 0, environment: .production, filter: .tags(TagExpression(all: ["x"], none: ["ok", "\u{0}"])), cursor: 0,
                    count: 10)
            }
            #expect(badTag?.field == "filter.none[1]")
            let badTask = await registryError {
                try await registry.scanShard(app: app, task: ShardTask(shard: 0, of: 3), environment: .production, cursor: 0, count: 10)
            }
            #expect(badTask?.field == "shard")
            let badCursor = await registryError {
                try await registry.scanShard(app: app, shard: 0, environment: .production, cursor: 1_024, count: 10)
            }
            #expect(badCursor?.field == "cursor")
        }
    }

    @Test func resolveOpenIDsCountsUnknownAndOtherEnvironment() async throws {
        try await withRegistry { registry, _ in
            try await registry.bind(
                [
                    DeviceRegistration(token: token(1), environment: .production, openID: "alice"),
                    DeviceRegistration(token: token(2), environment: .production, openID: "bob"),
                    DeviceRegistration(token: token(3), environment: .sandbox, openID: "carol"),
                    DeviceRegistration(token: token(4), environment: .production, openID: "dave"),
                ],
                app: app
            )
            try await registry.unbind(app: app, token: token(4))  // dave logged out
            let resolution = try await registry.resolveOpenIDs(
                app: app,
                environment: .production,
                openIDs: ["bob", "alice", "zed", "carol", "dave", "bob"]
            )
            #expect(resolution.tokens == [token(2), token(1)])
            #expect(resolution.unknownCount == 2)  // zed, dave
            #expect(resolution.otherEnvironmentCount == 1)  // carol
            let sandbox = try await registry.resolveOpenIDs(app: app, environment: .sandbox, openIDs: ["carol", "alice"])
            let id = try #require(try await registry.records(app: app, tokens: [token(3)])[0]?.id)
            #expect(sandbox == OpenIDResolution(tokens: [token(3)], ids: [id], unknownCount: 0, otherEnvironmentCount: 1))
            #expect(try await registry.resolveOpenIDs(app: app, environment: .sandbox, openIDs: []).tokens.isEmpty)
        }
    }

    @Test func resolveManyOpenIDsAcrossBatches() async throws {
        try await withRegistry { registry, _ in
            let devices = (0..<2_500).map { DeviceRegistration(token: token($0), environment: .production, openID: "user-\($0)") }
            try await registry.bind(devices, app: app)
            let openIDs = (0..<3_000).map { "user-\($0)" }
            let resolution = try await registry.resolveOpenIDs(app: app, environment: .production, openIDs: openIDs)
            #expect(resolution.tokens == (0..<2_500).map(token))
            #expect(resolution.unknownCount == 500)
        }
    }

    @Test func theShardPagesEndAfterTheCompletePageAndHoldEachDeviceOnce() async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 1)) { registry, _ in
            try await populate(registry)
            var pages = registry.pages(app: app, task: ShardTask(shard: 0, of: 1), environment: .production, pageSize: 7)
                .makeAsyncIterator()
            var numbers: [Int] = []
            var pageCount = 0
            while let page = try await pages.next() {
                pageCount += 1
                #expect(page.cursor == pages.cursor)
                #expect(page.isComplete == pages.isComplete)
                numbers += page.tokens.map { Int($0.hex, radix: 16)! }
            }
            #expect(pages.isComplete)
            #expect(pageCount > 1, "50 devices at about 7 a page")
            #expect(numbers.sorted() == Array(0..<50), "every production device once")
            #expect(try await pages.next() == nil, "a finished walk stays finished")
        }
    }
}
