import APNsCore
import Redis
import Testing

@testable import PushStore

@Suite("App suspension")
struct AppSuspensionTests {
    @Test func suspendReadAndLift() async throws {
        try await withRedis { client async throws in
            let suspension = AppSuspension(client: client)
            #expect(try await suspension.reason(app: "a", environment: .production) == nil)
            try await suspension.suspend(app: "a", environment: .production, for: .seconds(60), reason: "BadCertificate")
            #expect(try await suspension.reason(app: "a", environment: .production) == "BadCertificate")
            #expect(try await suspension.reason(app: "b", environment: .production) == nil)
            #expect(try await suspension.reason(app: "a", environment: .sandbox) == nil, "the other environment still sends")
            let ttl = try await client.pttl(AppSuspension.key(app: "a", environment: .production))
            #expect(ttl > 0 && ttl <= 60_000)

            // Suspending again replaces the reason and the duration.
            try await suspension.suspend(app: "a", environment: .production, for: .seconds(600), reason: "TopicDisallowed")
            #expect(try await suspension.reason(app: "a", environment: .production) == "TopicDisallowed")
            #expect(try await client.pttl(AppSuspension.key(app: "a", environment: .production)) > 60_000)

            try await suspension.lift(app: "a", environment: .production)
            try await suspension.lift(app: "a", environment: .production)
            #expect(try await suspension.reason(app: "a", environment: .production) == nil)
        }
    }

    @Test func theKeyIsInTheAppsSlot() async throws {
        try await withRedis { client async throws in
            try await AppSuspension(client: client).suspend(app: "my.app", environment: .sandbox, for: .seconds(60), reason: "r")
            #expect(try await client.string("pf:{my.app}:suspended:sandbox") == "r")
        }
    }

    @Test func invalidArgumentsNameTheirField() async throws {
        try await withRedis { client async throws in
            let suspension = AppSuspension(client: client)
            #expect(
                await registryError { try await suspension.suspend(app: "a", environment: .production, for: .zero, reason: "r") }?.field == "duration"
            )
            #expect(
                await registryError { try await suspension.suspend(app: "a", environment: .production, for: .microseconds(999), reason: "r") }?.field
                    == "duration")
            #expect(
                await registryError { try await suspension.suspend(app: "", environment: .production, for: .seconds(1), reason: "r") }?.field == "app"
            )
            #expect(await registryError { try await suspension.reason(app: "a:b", environment: .sandbox) }?.field == "app")
            #expect(try await client.keyCount() == 0)
        }
    }
}
