import APNsCore
import PushCore
import Redis
import Testing

@testable import PushStore

@Suite("Bind, unbind, openids and tags")
struct DeviceRegistryBindingTests {
    let app = "com.example.news"

    @Test func bindThenLookUp() async throws {
        let clock = ManualClock(1_700_000_000_000)
        try await withRegistry(clock: clock) { registry, client in
            let a = token(1)
            #expect(try await registry.device(app: app, token: a) == nil)
            try await registry.bind(app: app, token: a, environment: .production, openID: "u1", tags: ["sports", "vip"])
            let record = try await registry.device(app: app, token: a)
            #expect(
                record
                    == DeviceRecord(token: a, environment: .production, openID: "u1", registeredAt: 1_700_000_000_000, tags: ["sports", "vip"])
            )
            #expect(try await registry.audienceTokens(app: app, environment: .production) == [a])
            #expect(try await registry.audienceTokens(app: app, environment: .sandbox).isEmpty)
            #expect(try await registry.mappedToken(app: app, openID: "u1", client: client) == a)
            // The same token of another app is another device.
            #expect(try await registry.device(app: "com.example.other", token: a) == nil)
        }
    }

    @Test func recordsOfManyTokensComeInTheirOrderWithNilForTheUnregistered() async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 4)) { registry, _ in
            try await registry.bind(
                [
                    DeviceRegistration(token: token(1), environment: .production, openID: "u1", tags: ["vip"]),
                    DeviceRegistration(token: token(2), environment: .sandbox, tags: ["sports", "news"]),
                    DeviceRegistration(token: token(4), environment: .production),
                ], app: app)
            let tokens = (0..<1_200).map { token($0 % 6) }
            let records = try await registry.devices(app: app, tokens: tokens)
            #expect(records.count == tokens.count)
            for (asked, record) in zip(tokens, records) {
                #expect(record == (try await registry.device(app: app, token: asked)), "\(asked.hex)")
            }
            #expect(records[1]?.tags == ["vip"])
            #expect(records[2]?.tags == ["news", "sports"])
            #expect(records[3] == nil)
            #expect(try await registry.devices(app: app, tokens: []).isEmpty)
        }
    }

    @Test func rebindUpdatesEnvironmentAndTime() async throws {
        let clock = ManualClock(1_000)
        try await withRegistry(clock: clock) { registry, client in
            let a = token(7)
            try await registry.bind(app: app, token: a, environment: .sandbox, tags: ["beta"])
            clock.advance(by: 500)
            try await registry.bind(app: app, token: a, environment: .production)
            let record = try #require(try await registry.device(app: app, token: a))
            #expect(record.environment == .production)
            #expect(record.registeredAt == 1_500)
            #expect(record.tags == ["beta"])
            #expect(try await registry.audienceTokens(app: app, environment: .sandbox).isEmpty)
            #expect(try await registry.audienceTokens(app: app, environment: .production) == [a])
            #expect(try await registry.deviceCount(app: app) == DeviceCount(sandbox: 0, production: 1))

            // An explicit time wins over the clock.
            try await registry.bind(app: app, token: a, environment: .production, registeredAt: 42)
            #expect(try await registry.device(app: app, token: a)?.registeredAt == 42)
        }
    }

    @Test func openIDMovesToTheDeviceItLastLoggedInOn() async throws {
        try await withRegistry { registry, client in
            let (a, b) = (token(1), token(2))
            try await registry.bind(app: app, token: a, environment: .production, openID: "U")
            try await registry.bind(app: app, token: b, environment: .production, openID: "U")
            #expect(try await registry.mappedToken(app: app, openID: "U", client: client) == b)
            #expect(try await registry.device(app: app, token: a)?.openID == nil)
            #expect(try await registry.device(app: app, token: b)?.openID == "U")
            let resolution = try await registry.resolveOpenIDs(app: app, environment: .production, openIDs: ["U"])
            #expect(resolution.tokens == [b])
        }
    }

    @Test func deviceMovesToTheUserWhoLastLoggedInOnIt() async throws {
        try await withRegistry { registry, client in
            let a = token(1)
            try await registry.bind(app: app, token: a, environment: .production, openID: "U")
            try await registry.bind(app: app, token: a, environment: .production, openID: "V")
            #expect(try await client.string(openIDKey(app: app, openID: "U")) == nil)
            #expect(try await registry.mappedToken(app: app, openID: "V", client: client) == a)
            #expect(try await registry.device(app: app, token: a)?.openID == "V")
            // A bind without an openid keeps the device's user.
            try await registry.bind(app: app, token: a, environment: .production)
            #expect(try await registry.device(app: app, token: a)?.openID == "V")
            #expect(try await registry.mappedToken(app: app, openID: "V", client: client) == a)
        }
    }

    @Test func bothOpenIDRulesTogether() async throws {
        try await withRegistry { registry, client in
            let (a, b) = (token(1), token(2))
            // U on A, V on B; then U logs in on B: V loses B, U loses A.
            try await registry.bind(app: app, token: a, environment: .production, openID: "U")
            try await registry.bind(app: app, token: b, environment: .sandbox, openID: "V")
            try await registry.bind(app: app, token: b, environment: .sandbox, openID: "U")
            #expect(try await registry.mappedToken(app: app, openID: "U", client: client) == b)
            #expect(try await client.string(openIDKey(app: app, openID: "V")) == nil)
            #expect(try await registry.device(app: app, token: a)?.openID == nil)
            #expect(try await registry.device(app: app, token: b)?.openID == "U")
            // Both devices stay registered; only the user mappings moved.
            #expect(try await registry.deviceCount(app: app) == DeviceCount(sandbox: 1, production: 1))
            let resolution = try await registry.resolveOpenIDs(app: app, environment: .sandbox, openIDs: ["U", "V"])
            let id = try #require(try await registry.records(app: app, tokens: [b])[0]?.id)
            #expect(resolution == OpenIDResolution(tokens: [b], ids: [id], unknownCount: 1, otherEnvironmentCount: 0))
        }
    }

    @Test func unbindRemovesEverything() async throws {
        try await withRegistry { registry, client in
            let (a, b) = (token(1), token(2))
            try await registry.bind(app: app, token: a, environment: .production, openID: "U", tags: ["x", "y"])
            try await registry.bind(app: app, token: b, environment: .production, tags: ["x"])
            #expect(try await registry.unbind(app: app, token: a))
            #expect(try await registry.audienceTokens(app: app, environment: .production) == [b])
            #expect(try await registry.audienceTokens(app: app, environment: .production, filter: .tags(TagExpression(any: ["x", "y"]))) == [b])
            #expect(try await registry.storedRecord(a, app: app, client: client) == nil)
            #expect(try await registry.storedRecord(b, app: app, client: client) != nil)
            #expect(try await client.string(openIDKey(app: app, openID: "U")) == nil)
            #expect(try await registry.device(app: app, token: a) == nil)
            #expect(try await registry.appTags(app: app) == ["x": 1])
            #expect(try await registry.deviceCount(app: app).total == 1)
            // Unbinding again is a no-op.
            #expect(try await registry.unbind(app: app, token: a) == false)
        }
    }

    @Test func unbindLeavesAnOpenIDThatMovedOnAlone() async throws {
        try await withRegistry { registry, client in
            let (a, b) = (token(1), token(2))
            try await registry.bind(app: app, token: a, environment: .production, openID: "U")
            try await registry.bind(app: app, token: b, environment: .production, openID: "U")
            try await registry.unbind(app: app, token: a)
            #expect(try await registry.mappedToken(app: app, openID: "U", client: client) == b)
        }
    }

    @Test func tagsAddRemoveAndList() async throws {
        try await withRegistry { registry, _ in
            let (a, b) = (token(1), token(2))
            try await registry.bind(app: app, token: a, environment: .production, tags: ["b"])
            try await registry.bind(app: app, token: b, environment: .sandbox)
            #expect(try await registry.addTags(["c", "a", "b"], app: app, token: a) == 2)
            #expect(try await registry.tags(app: app, token: a) == ["a", "b", "c"])
            #expect(try await registry.removeTags(["b", "zzz"], app: app, token: a) == 1)
            #expect(try await registry.tags(app: app, token: a) == ["a", "c"])
            #expect(try await registry.addTags(["a", "東京 🗼"], app: app, token: b) == 2)
            #expect(try await registry.appTags(app: app) == ["a": 2, "c": 1, "東京 🗼": 1])
            #expect(try await registry.removeTags(["a"], app: app, token: b) == 1)
            #expect(try await registry.removeTags(["東京 🗼"], app: app, token: b) == 1)
            #expect(try await registry.appTags(app: app) == ["a": 1, "c": 1])

            let unknown = token(99)
            #expect(await registryError { try await registry.addTags(["a"], app: app, token: unknown) }?.code == .deviceNotRegistered)
            #expect(await registryError { try await registry.removeTags(["a"], app: app, token: unknown) }?.code == .deviceNotRegistered)
            #expect(await registryError { try await registry.tags(app: app, token: unknown) }?.code == .deviceNotRegistered)
        }
    }

    @Test func countsPerEnvironment() async throws {
        try await withRegistry(configuration: DeviceRegistryConfiguration(defaultShardCount: 4)) { registry, _ in
            #expect(try await registry.deviceCount(app: app) == DeviceCount(sandbox: 0, production: 0))
            for number in 0..<30 {
                try await registry.bind(app: app, token: token(number), environment: number < 10 ? .sandbox : .production)
            }
            let count = try await registry.deviceCount(app: app)
            #expect(count == DeviceCount(sandbox: 10, production: 20))
            #expect(count.total == 30)
            #expect(count[.sandbox] == 10)
        }
    }

    @Test func invalidInputsNameTheField() async throws {
        try await withRegistry { registry, _ in
            let a = token(1)
            let cases: [(String, StoreError.Code, String, () async throws -> Void)] = [
                ("empty app", .invalidApp, "app", { try await registry.bind(app: "", token: a, environment: .sandbox) }),
                ("brace in app", .invalidApp, "app", { try await registry.bind(app: "a}b", token: a, environment: .sandbox) }),
                ("colon in app", .invalidApp, "app", { try await registry.unbind(app: "a:b", token: a) }),
                ("long app", .invalidApp, "app", { _ = try await registry.deviceCount(app: String(repeating: "a", count: 136)) }),
                ("space in app", .invalidApp, "app", { _ = try await registry.deviceCount(app: "news~start~Has Space") }),
                ("empty tag", .invalidTag, "tags[1]", { try await registry.bind(app: app, token: a, environment: .sandbox, tags: ["ok", ""]) }),
                (
                    "long tag", .invalidTag, "tags[0]",
                    { try await registry.bind(app: app, token: a, environment: .sandbox, tags: [String(repeating: "é", count: 65)]) }
                ),
                ("control in tag", .invalidTag, "tags[0]", { _ = try await registry.addTags(["a\nb"], app: app, token: a) }),
                ("empty openid", .invalidOpenID, "openID", { try await registry.bind(app: app, token: a, environment: .sandbox, openID: "") }),
                (
                    "long openid", .invalidOpenID, "openID",
                    { try await registry.bind(app: app, token: a, environment: .sandbox, openID: String(repeating: "u", count: 129)) }
                ),
                (
                    "bulk openid", .invalidOpenID, "devices[1].openID",
                    {
                        try await registry.bind(
                            [
                                DeviceRegistration(token: a, environment: .sandbox),
                                DeviceRegistration(token: a, environment: .sandbox, openID: "\u{7}"),
                            ],
                            app: app
                        )
                    }
                ),
                (
                    "negative time", .invalidArgument, "registeredAt",
                    { try await registry.bind(app: app, token: a, environment: .sandbox, registeredAt: -1) }
                ),
                (
                    "shard out of range", .invalidArgument, "shard",
                    { _ = try await registry.scanShard(app: app, shard: 16, environment: .sandbox, cursor: 0, count: 10) }
                ),
                (
                    "zero count", .invalidArgument, "count",
                    { _ = try await registry.scanShard(app: app, shard: 0, environment: .sandbox, cursor: 0, count: 0) }
                ),
                (
                    "negative timestamp", .invalidArgument, "invalidSince",
                    { try await registry.removeIfNotRegisteredSince(app: app, token: a, environment: .sandbox, invalidSince: -5) }
                ),
                (
                    "resolve openid", .invalidOpenID, "openIDs[2]",
                    { _ = try await registry.resolveOpenIDs(app: app, environment: .sandbox, openIDs: ["a", "b", ""]) }
                ),
            ]
            for (name, code, field, call) in cases {
                let error = await registryError { try await call() }
                #expect(error?.code == code, "\(name)")
                #expect(error?.field == field, "\(name)")
            }
            // Nothing was written by the refused calls.
            #expect(try await registry.deviceCount(app: app).total == 0)
            // 128 bytes is still fine.
            try await registry.bind(
                app: app, token: a, environment: .sandbox, openID: String(repeating: "u", count: 128), tags: [String(repeating: "t", count: 128)])
        }
    }
}
