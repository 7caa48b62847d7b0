import APNsCore
import Redis
import Testing

@testable import PushStore

@Suite("Feedback removal")
struct DeviceRegistryFeedbackTests {
    let app = "feedback"

    @Test func olderTimestampRemovesAndSecondCallIsANoOp() async throws {
        let clock = ManualClock(10_000)
        try await withRegistry(clock: clock) { registry, client in
            let a = token(1)
            try await registry.bind(app: app, token: a, environment: .production, openID: "U", tags: ["t"])
            // APNs saw the token invalid after it registered: remove.
            #expect(try await registry.removeIfNotRegisteredSince(app: app, token: a, environment: .production, invalidSince: 10_001))
            #expect(try await registry.device(app: app, token: a) == nil)
            #expect(try await client.string(openIDKey(app: app, openID: "U")) == nil)
            #expect(try await registry.appTags(app: app).isEmpty)
            #expect(try await registry.removeIfNotRegisteredSince(app: app, token: a, environment: .production, invalidSince: 10_001) == false)
        }
    }

    @Test func equalTimestampRemoves() async throws {
        try await withRegistry { registry, _ in
            try await registry.bind(app: app, token: token(1), environment: .production, registeredAt: 5_000)
            #expect(try await registry.removeIfNotRegisteredSince(app: app, token: token(1), environment: .production, invalidSince: 5_000))
        }
    }

    @Test func tokenRegisteredAgainAfterTheTimestampIsKept() async throws {
        let clock = ManualClock(10_000)
        try await withRegistry(clock: clock) { registry, _ in
            let a = token(1)
            try await registry.bind(app: app, token: a, environment: .production)
            clock.advance(by: 5_000)
            try await registry.bind(app: app, token: a, environment: .production)  // re-registered at 15,000
            #expect(try await registry.removeIfNotRegisteredSince(app: app, token: a, environment: .production, invalidSince: 12_000) == false)
            #expect(try await registry.device(app: app, token: a)?.registeredAt == 15_000)
        }
    }

    @Test func noTimestampRemovesUnconditionally() async throws {
        let clock = ManualClock(10_000)
        try await withRegistry(clock: clock) { registry, _ in
            let a = token(1)
            try await registry.bind(app: app, token: a, environment: .sandbox)
            #expect(try await registry.removeIfNotRegisteredSince(app: app, token: a, environment: .sandbox, invalidSince: nil))
            #expect(try await registry.deviceCount(app: app).total == 0)
            #expect(try await registry.removeIfNotRegisteredSince(app: app, token: a, environment: .sandbox, invalidSince: nil) == false)
        }
    }

    @Test func tokenNowInTheOtherEnvironmentIsKept() async throws {
        try await withRegistry { registry, _ in
            let a = token(1)
            try await registry.bind(app: app, token: a, environment: .production)
            // A BadDeviceToken from the sandbox says nothing about the production registration.
            #expect(try await registry.removeIfNotRegisteredSince(app: app, token: a, environment: .sandbox, invalidSince: nil) == false)
            #expect(try await registry.device(app: app, token: a)?.environment == .production)
        }
    }
}
