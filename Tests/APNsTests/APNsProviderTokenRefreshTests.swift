import APNs
import APNsCore
import APNsSimulator
import Foundation
import Testing

/// The client's use of the token manager against the simulator.
@Suite("Provider token refresh against the simulator", .serialized)
struct APNsProviderTokenRefreshTests {
    @Test("403 ExpiredProviderToken refreshes the token once and retries")
    func refreshOnExpired() async throws {
        let clock = APNsProviderTokenManagerTests.TestClock(Date().addingTimeInterval(-80 * 60))
        try await SimulatorHarness.with(clock: { clock.now }) { harness in
            // Issued 80 minutes ago and brand new to the client: APNs says expired, the client
            // may not replace it yet.
            let first = try await harness.client.send(harness.request())
            #expect(first.reason == .expiredProviderToken)
            #expect(first.attempts == 1)
            // 30 minutes later (client clock) the token may be replaced: one refresh, one retry.
            clock.advance(minutes: 30)
            let second = try await harness.client.send(harness.request())
            #expect(second.status == 200)
            #expect(second.attempts == 2)
            let manager = try #require(try harness.client.providerTokenManager(for: harness.credential))
            #expect(await manager.tokensIssued == 2)
            let counters = try await harness.simulator.counters()
            #expect(counters.rejections["ExpiredProviderToken"] == 2)
            #expect(counters.accepted == 1)
        }
    }
}
