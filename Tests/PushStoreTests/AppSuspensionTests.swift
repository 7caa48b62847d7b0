import Redis
import Testing

@testable import PushStore

@Suite("App suspension")
struct AppSuspensionTests {
    @Test func suspendReadAndLift() async throws {
        try await withRedis { client async throws in
            let suspension = AppSuspension(client: client)
            #expect(try await suspension.reason(app: "a") == nil)
            try await suspension.suspend(app: "a", for: .seconds(60), reason: "BadCertificate")
            #expect(try await suspension.reason(app: "a") == "BadCertificate")
            #expect(try await suspension.reason(app: "b") == nil)
            let ttl = try await client.pttl(AppSuspension.key(app: "a"))
            #expect(ttl > 0 && ttl <= 60_000)

            // Suspending again replaces the reason and the duration.
            try await suspension.suspend(app: "a", for: .seconds(600), reason: "TopicDisallowed")
            #expect(try await suspension.reason(app: "a") == "TopicDisallowed")
            #expect(try await client.pttl(AppSuspension.key(app: "a")) > 60_000)

            try await suspension.lift(app: "a")
            try await suspension.lift(app: "a")
            #expect(try await suspension.reason(app: "a") == nil)
        }
    }

    @Test func theKeyIsInTheAppsSlot() async throws {
        try await withRedis { client async throws in
            try await AppSuspension(client: client).suspend(app: "my.app", for: .seconds(60), reason: "r")
            #expect(try await client.string("pf:{my.app}:suspended") == "r")
        }
    }

    @Test func invalidArgumentsNameTheirField() async throws {
        try await withRedis { client async throws in
            let suspension = AppSuspension(client: client)
            #expect(await registryError { try await suspension.suspend(app: "a", for: .zero, reason: "r") }?.field == "duration")
            #expect(await registryError { try await suspension.suspend(app: "a", for: .microseconds(999), reason: "r") }?.field == "duration")
            #expect(await registryError { try await suspension.suspend(app: "", for: .seconds(1), reason: "r") }?.field == "app")
            #expect(await registryError { try await suspension.reason(app: "a:b") }?.field == "app")
            #expect(try await client.keyCount() == 0)
        }
    }
}
