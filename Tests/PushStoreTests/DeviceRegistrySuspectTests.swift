import APNsCore
import PushCore
import Redis
import Testing

@testable import PushStore

/// Tokens kept aside instead of removed (`BadDeviceToken`, `DeviceTokenNotForTopic`), on a real
/// redis-server: out of every audience, record kept, back on a new bind, a restore or a move.
@Suite("Suspect devices")
struct DeviceRegistrySuspectTests {
    let app = "suspects"

    /// Every token a broadcast of `environment` would reach.
    func audience(_ registry: DeviceRegistry, _ environment: APNsEnvironment) async throws -> Set<DeviceToken> {
        try await registry.audienceTokens(app: app, environment: environment)
    }

    /// Every token of `environment` kept aside.
    func suspects(_ registry: DeviceRegistry, _ environment: APNsEnvironment) async throws -> Set<DeviceToken> {
        try await registry.audienceTokens(app: app, environment: environment, filter: .suspects)
    }

    @Test("a suspect token leaves every audience, keeps its record, tags and openid, and is counted apart")
    func keptAside() async throws {
        try await withRegistry { registry, _ in
            try await registry.bind(app: app, token: token(1), environment: .production, openID: "u1", tags: ["news"], registeredAt: 1_000)
            try await registry.bind(app: app, token: token(2), environment: .production, tags: ["news"], registeredAt: 1_000)
            #expect(try await registry.markSuspect(app: app, token: token(1), environment: .production, reason: "BadDeviceToken", at: 2_000))
            #expect(try await registry.markSuspect(app: app, token: token(1), environment: .production, reason: "BadDeviceToken", at: 2_000) == false)

            #expect(try await audience(registry, .production) == [token(2)])
            #expect(try await suspects(registry, .production) == [token(1)])
            let home = try await registry.layout(app: app).home(of: token(1))
            let page = try await registry.scanSuspects(app: app, shard: home, environment: .production, cursor: 0, count: 100)
            #expect(page.tokens == [token(1)] && page.isComplete, "one page of its shard task holds it")
            let tagged = try await registry.audienceTokens(app: app, environment: .production, filter: .tags(TagExpression(all: ["news"])))
            #expect(tagged == [token(2)])
            #expect(!tagged.contains(token(1)), "tag audiences leave it out too")
            let resolution = try await registry.resolveOpenIDs(app: app, environment: .production, openIDs: ["u1"])
            #expect(resolution.tokens.isEmpty && resolution.suspectCount == 1 && resolution.unknownCount == 0)

            let record = try #require(try await registry.device(app: app, token: token(1)))
            #expect(record.suspicion == DeviceSuspicion(reason: "BadDeviceToken", since: 2_000))
            #expect(record.openID == "u1" && record.tags == ["news"] && record.environment == .production)
            let count = try await registry.deviceCount(app: app)
            #expect(count.production == 1 && count.suspectProduction == 1 && count.total == 2)
        }
    }

    @Test("nothing is kept aside that registered again after the answer, or is registered elsewhere")
    func conditions() async throws {
        try await withRegistry { registry, _ in
            try await registry.bind(app: app, token: token(1), environment: .production, registeredAt: 5_000)
            #expect(try await registry.markSuspect(app: app, token: token(1), environment: .production, reason: "BadDeviceToken", at: 4_999) == false)
            #expect(try await registry.markSuspect(app: app, token: token(1), environment: .sandbox, reason: "BadDeviceToken", at: 9_000) == false)
            #expect(try await registry.markSuspect(app: app, token: token(9), environment: .sandbox, reason: "BadDeviceToken", at: 9_000) == false)
            #expect(try await registry.deviceCount(app: app) == DeviceCount(sandbox: 0, production: 1))
        }
    }

    @Test("binding again, a restore, or an unbind ends the suspicion")
    func endings() async throws {
        try await withRegistry { registry, _ in
            for n in 1...3 {
                try await registry.bind(app: app, token: token(n), environment: .production, registeredAt: 1_000)
                try await registry.markSuspect(app: app, token: token(n), environment: .production, reason: "DeviceTokenNotForTopic", at: 2_000)
            }
            try await registry.bind(app: app, token: token(1), environment: .sandbox, registeredAt: 3_000)
            #expect(try await registry.restoreSuspect(app: app, token: token(2)))
            #expect(try await registry.restoreSuspect(app: app, token: token(2)) == false)
            #expect(try await registry.unbind(app: app, token: token(3)))
            #expect(try await audience(registry, .sandbox) == [token(1)])
            #expect(try await audience(registry, .production) == [token(2)])
            #expect(try await suspects(registry, .production).isEmpty)
            #expect(try await registry.device(app: app, token: token(1))?.suspicion == nil)
            #expect(try await registry.device(app: app, token: token(2))?.suspicion == nil)
        }
    }

    @Test("a 410 removes a suspect token like any other")
    func goneWhileSuspect() async throws {
        try await withRegistry { registry, _ in
            try await registry.bind(app: app, token: token(1), environment: .production, tags: ["t"], registeredAt: 1_000)
            try await registry.markSuspect(app: app, token: token(1), environment: .production, reason: "BadDeviceToken", at: 2_000)
            #expect(try await registry.removeIfNotRegisteredSince(app: app, token: token(1), environment: .production, invalidSince: 3_000))
            #expect(try await suspects(registry, .production).isEmpty)
            #expect(try await registry.deviceCount(app: app).total == 0)
        }
    }

    @Test("a device found in the other environment moves there, with its tags and openid")
    func move() async throws {
        try await withRegistry { registry, _ in
            try await registry.bind(app: app, token: token(1), environment: .production, openID: "u1", tags: ["t"], registeredAt: 1_000)
            try await registry.markSuspect(app: app, token: token(1), environment: .production, reason: "BadDeviceToken", at: 2_000)
            #expect(try await registry.moveToOtherEnvironment(app: app, token: token(1), from: .production, at: 3_000))
            #expect(
                try await registry.moveToOtherEnvironment(app: app, token: token(1), from: .production, at: 3_000) == false,
                "not in production any more")
            let record = try #require(try await registry.device(app: app, token: token(1)))
            #expect(record.environment == .sandbox && record.suspicion == nil && record.openID == "u1" && record.tags == ["t"])
            #expect(try await audience(registry, .sandbox) == [token(1)])
            #expect(try await suspects(registry, .production).isEmpty)
            #expect(try await registry.resolveOpenIDs(app: app, environment: .sandbox, openIDs: ["u1"]).tokens == [token(1)])

            // A device registered again after the check started is left as it is.
            try await registry.bind(app: app, token: token(2), environment: .production, registeredAt: 5_000)
            #expect(try await registry.moveToOtherEnvironment(app: app, token: token(2), from: .production, at: 4_000) == false)
        }
    }

    @Test("bad arguments are refused naming the field")
    func arguments() async throws {
        try await withRegistry { registry, _ in
            #expect(
                await registryError { try await registry.markSuspect(app: "", token: token(1), environment: .sandbox, reason: "r", at: 1) }?.field
                    == "app")
            #expect(
                await registryError { try await registry.markSuspect(app: app, token: token(1), environment: .sandbox, reason: "", at: 1) }?.field
                    == "reason")
            #expect(
                await registryError { try await registry.markSuspect(app: app, token: token(1), environment: .sandbox, reason: "r", at: -1) }?.field
                    == "at")
            #expect(
                await registryError { try await registry.scanSuspects(app: app, shard: 99, environment: .sandbox, cursor: 0, count: 1) }?.field
                    == "shard")
        }
    }
}
