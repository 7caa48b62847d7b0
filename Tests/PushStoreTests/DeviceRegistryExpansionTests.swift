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

    private func collect(_ registry: DeviceRegistry, _ audience: TagAudience) async throws -> Set<Int> {
        var numbers = Set<Int>()
        var cursor: UInt64 = 0
        repeat {
            let page = try await registry.scanTagAudience(audience, cursor: cursor, count: 5)
            for token in page.tokens {
                #expect(numbers.insert(Int(token.hex, radix: 16)!).inserted)
            }
            cursor = page.cursor
        } while cursor != 0
        return numbers
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
                let got = try await registry.withTagAudience(app: app, shard: 0, environment: environment, expression: expression) { audience in
                    #expect(audience.count == want.count, "\(name) \(environment)")
                    return try await collect(registry, audience)
                }
                #expect(got == want, "\(name) \(environment)")
            }
            // Only the registry's own keys are left: no audience or scratch set.
            let leftovers = try await client.send("KEYS", .string("pf:{\(app):0}:audience:*")).array ?? []
            #expect(try await client.keyCount() > 0)
            #expect(leftovers.isEmpty)
        }
    }

    @Test func audienceKeyHasATimeToLiveAndTheHelperDeletesIt() async throws {
        let configuration = DeviceRegistryConfiguration(defaultShardCount: 1, audienceTimeToLive: .seconds(90))
        try await withRegistry(configuration: configuration) { registry, client in
            try await populate(registry)
            let audience = try await registry.tagAudience(app: app, shard: 0, environment: .production, expression: TagExpression(all: ["even"]))
            #expect(audience.key.hasPrefix("pf:{audience:0}:audience:"))
            #expect(audience.count == 25)
            let ttl = try #require(try await client.send("PTTL", .string(audience.key)).int)
            #expect(ttl > 80_000 && ttl <= 90_000)
            try await registry.releaseTagAudience(audience)
            #expect(try await client.send("EXISTS", .string(audience.key)) == .integer(0))

            // The helper deletes the set also when the body throws.
            struct Stop: Error {}
            var key = ""
            await #expect(throws: Stop.self) {
                try await registry.withTagAudience(app: app, shard: 0, environment: .production, expression: TagExpression(any: ["odd"])) {
                    key = $0.key
                    #expect(try await client.send("EXISTS", .string($0.key)) == .integer(1))
                    throw Stop()
                }
            }
            #expect(try await client.send("EXISTS", .string(key)) == .integer(0))
        }
    }

    @Test func invalidExpressionsAreRefused() async throws {
        try await withRegistry { registry, _ in
            let empty = await registryError {
                try await registry.tagAudience(app: app, shard: 0, environment: .production, expression: TagExpression(none: ["x"]))
            }
            #expect(empty?.code == .invalidTagExpression)
            let badTag = await registryError {
                try await registry.tagAudience(app: app, shard: 0, environment: .production, expression: TagExpression(all: ["x"], none: ["ok", "\u{0}"]))
            }
            #expect(badTag?.field == "expression.none[1]")
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
            #expect(sandbox == OpenIDResolution(tokens: [token(3)], unknownCount: 0, otherEnvironmentCount: 1))
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
}
