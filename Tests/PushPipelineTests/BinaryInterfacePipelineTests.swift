import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import PipelineTestSupport
import PushCore
import PushJobs
import PushPipeline
import PushStore
import Testing

/// An app configured with `transport: binary`: its campaign goes out over the simulator's
/// binary gateway, through error responses, and its feedback service's tokens leave the
/// registry.
@Suite("The binary interface end to end", .serialized)
struct BinaryInterfacePipelineTests {
    typealias Stack = PipelineStack

    @Test(
        "50,000 notifications with 2% invalid tokens spread through them: each valid token taken once, each invalid one kept aside; the feedback service's tokens removed, a re-registered one kept"
    )
    func campaign() async throws {
        let total = 50_000
        let tokens = (0..<total).map(Stack.token)
        let invalid = stride(from: 17, to: total, by: 50).map { tokens[$0] }
        let uninstalled = stride(from: 41, to: total, by: 500).map { tokens[$0] }
        let registeredAgain = uninstalled[0]
        var options = Stack.Options()
        options.certificates = [.sandbox: .seconds(365 * 86_400)]
        options.binaryInterface = true
        try await Stack.with(
            options,
            simulator: { configuration in
                configuration.devices.bad = Set(invalid.map(\.hex))
                configuration.devices.unregistered = Dictionary(uniqueKeysWithValues: uninstalled.map { ($0.hex, Int64(5_000_000)) })
            }
        ) { stack in
            try await stack.register(tokens)
            // Registered again after the service's time (5,000 s): the feedback must not remove it.
            try await stack.registry.bind(app: Stack.app, token: registeredAgain, environment: .sandbox, registeredAt: 6_000_000)
            var targeted = 0
            try await stack.withWorker { counters in
                try await stack.publish(Stack.job(id: "binary", audience: .broadcast))
                let report = try await eventually("the campaign completes and its invalid tokens are kept aside", timeout: .seconds(300)) {
                    try await stack.report("binary")
                } until: {
                    $0.isComplete && $0.suspect == invalid.count
                }
                // The feedback service is read from the worker's start: an uninstalled token it
                // removed before the broadcast read its shard is not in the audience.
                #expect(report.targeted >= total - uninstalled.count && report.targeted <= total, "\(report)")
                #expect(report.accepted == report.targeted - invalid.count, "\(report)")
                targeted = report.targeted
                #expect(report.failedByReason == ["BadDeviceToken": invalid.count])
                #expect(report.deadLettered == 0 && report.retried == 0)

                _ = try await eventually("the feedback service's tokens leave the registry") {
                    try await stack.registry.deviceCount(app: Stack.app)
                } until: {
                    $0.total == total - (uninstalled.count - 1)
                }
                #expect(counters[.feedbackRemoved] >= uninstalled.count - 1)
            }
            let seen = try await stack.simulator.counters()
            #expect(seen.acceptedPerToken.count == targeted - invalid.count, "every valid token reached")
            #expect(seen.duplicates == 0 && seen.acceptedPerToken.values.allSatisfy { $0 == 1 }, "none twice")
            #expect(seen.rejections == ["InvalidToken": invalid.count])
            #expect(try await stack.registry.device(app: Stack.app, token: registeredAgain) != nil)
            #expect(try await stack.registry.device(app: Stack.app, token: uninstalled[1]) == nil)
            #expect(try await stack.registry.device(app: Stack.app, token: invalid[0])?.suspicion?.reason == "BadDeviceToken")
        }
    }
}
