import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import PipelineTestSupport
import PushCore
import PushJobs
import PushStore
import Testing

/// The guardrails end to end, with real `pushfleet worker` and `pushfleet jobs` processes and
/// the APNs simulator: a misconfigured campaign is paused before it burns its audience and
/// changes nothing in the registry; only 410s remove tokens.
@Suite("Guardrails: a misconfigured campaign never burns its audience", .serialized)
struct GuardrailTests {
    typealias Stack = PipelineStack
    static let total = 100_000
    /// What two workers may send before both stopped: what they sent while the first settled
    /// batch (250 answers) was judged and the trip written, then each one's in-flight window
    /// (2,000) and, per chunk in flight (4), an admission (250) under way. Measured: 2,750 with
    /// the suite alone, up to 4,623 under the full test run; the bound leaves room for a slower
    /// machine and is still a tenth of the audience.
    static let sentBeforePauseBound = 10_000

    @Test(
        "A broadcast with a wrong topic: paused within its first few thousand sends, nothing removed or kept aside; resumed, it finishes, each device once"
    )
    func wrongTopic() async throws {
        let tokens = (0..<Self.total).map(Stack.token)
        var options = Stack.Options()
        // The shop's topic is one the app may address (an extra topic), but no device of the
        // registry belongs to it: APNs answers DeviceTokenNotForTopic for every one.
        options.appSettings = ["extra-topics: [\(EmbeddedStack.otherBundleID)]"]
        try await Stack.with(
            options, simulator: { $0.devices.topics = Dictionary(uniqueKeysWithValues: tokens.map { ($0.hex, EmbeddedStack.bundleID) }) }
        ) { stack in
            try await stack.register(tokens)
            let first = [try WorkerProcess.start(stack: stack), try WorkerProcess.start(stack: stack)]
            defer { first.forEach { $0.forceStop() } }
            try await stack.publish(Stack.job(id: "wrong-topic", audience: .broadcast, topic: EmbeddedStack.otherBundleID))

            let paused = try await eventually("the breaker to pause the campaign") {
                try await stack.report("wrong-topic")
            } until: {
                $0.state == .paused
            }
            #expect(paused.control.pausedBy == .breaker)
            #expect(paused.control.reason?.contains("DeviceTokenNotForTopic") == true, "\(paused.control.reason ?? "")")
            // Stopped workers send nothing more: what they sent is the paused campaign's all.
            for worker in first { try await worker.stopGracefully() }
            let sentWhilePaused = try await stack.simulator.counters().requests
            print("wrong topic: paused after \(sentWhilePaused) of \(Self.total) sends (\(paused.sent) settled when the pause was seen)")
            #expect(sentWhilePaused <= Self.sentBeforePauseBound, "paused within the first few thousand sends")
            var count = try await stack.registry.deviceCount(app: Stack.app)
            #expect(count.sandbox == Self.total && count.suspect == 0, "the registry is untouched: \(count)")

            // The pause outlives the workers: new ones leave the campaign alone.
            let workers = [try WorkerProcess.start(stack: stack), try WorkerProcess.start(stack: stack)]
            defer { workers.forEach { $0.forceStop() } }
            #expect(try await stack.requestsAfterMarkerJob() == sentWhilePaused, "nothing is sent while the job is paused")

            let resumed = try await CLIProcess.run(["jobs", "resume", "--config", stack.configurationPath, "wrong-topic"])
            #expect(resumed.status == 0, "\(resumed.standardOutput)\n\(resumed.standardError)")
            #expect(resumed.standardOutput.contains("resumed"), "\(resumed.standardOutput)")
            let done = try await eventually("the resumed campaign to finish", timeout: .seconds(300)) {
                try await stack.report("wrong-topic")
            } until: {
                $0.state == .complete
            }
            #expect(done.failedByReason == ["DeviceTokenNotForTopic": Self.total])
            #expect(done.sent == Self.total)
            #expect(done.control.breaker == .cleared)
            let seen = try await stack.simulator.counters()
            #expect(seen.rejections["DeviceTokenNotForTopic"] == Self.total, "each device once, before and after the pause")
            #expect(seen.requests - (try await stack.markerRequests) == Self.total)
            count = try await stack.registry.deviceCount(app: Stack.app)
            #expect(count.sandbox == Self.total && count.suspect == 0, "an extra topic's answer says nothing about the token: \(count)")
            #expect(done.suspect == 0 && done.removed == 0)
            for worker in workers { try await worker.stopGracefully() }
        }
    }

    @Test(
        "Production credentials on a registry of sandbox tokens: paused early, nothing changed; aborted, nothing more sent and the held changes discarded"
    )
    func wrongEnvironment() async throws {
        let tokens = (0..<Self.total).map(Stack.token)
        try await Stack.with(
            simulator: { _ in },
            // Production answers BadDeviceToken for every token: they were issued by the sandbox.
            productionSimulator: { $0.devices.bad = Set(tokens.map(\.hex)) }
        ) { stack in
            try await stack.register(tokens, environment: .production)
            let workers = [try WorkerProcess.start(stack: stack), try WorkerProcess.start(stack: stack)]
            defer { workers.forEach { $0.forceStop() } }
            try await stack.publish(Stack.job(id: "wrong-environment", audience: .broadcast, environment: .production))

            let paused = try await eventually("the breaker to pause the campaign") {
                try await stack.report("wrong-environment")
            } until: {
                $0.state == .paused
            }
            #expect(paused.control.reason?.contains("BadDeviceToken") == true, "\(paused.control.reason ?? "")")
            let production = try #require(stack.stack.productionSimulator)
            let stats = try await CLIProcess.run(["stats", "--config", stack.configurationPath, "wrong-environment"])
            #expect(stats.standardOutput.contains("state          paused"), "\(stats.standardOutput)")
            #expect(stats.standardOutput.contains("pushfleet jobs abort wrong-environment"), "the operator is told how to decide")

            let aborted = try await CLIProcess.run(["jobs", "abort", "--config", stack.configurationPath, "--json", "wrong-environment"])
            #expect(aborted.status == 0, "\(aborted.standardError)")
            let report = try await stack.report("wrong-environment")
            #expect(report.state == .cancelled)
            #expect(report.effectsDiscarded > 0, "the held BadDeviceToken changes are discarded")
            #expect(report.suspect == 0 && report.movedEnvironment == 0 && report.removed == 0)
            let resume = try await CLIProcess.run(["jobs", "resume", "--config", stack.configurationPath, "wrong-environment"])
            #expect(resume.status == 5, "a cancelled job cannot be resumed")
            for worker in workers { try await worker.stopGracefully() }
            // Stopped workers send nothing more: this is all the campaign ever sent.
            let sent = try await production.counters().requests
            print("wrong environment: \(sent) of \(Self.total) sent before the pause took hold; aborted")
            #expect(sent <= Self.sentBeforePauseBound, "paused within the first few thousand sends")
            let count = try await stack.registry.deviceCount(app: Stack.app)
            #expect(count.production == Self.total && count.suspect == 0 && count.sandbox == 0, "\(count)")
            #expect(try await stack.simulator.counters().requests == 0, "no token was tried in the sandbox: nothing was applied")
        }
    }

    @Test("A mixed campaign (2% 410, 1% BadDeviceToken) removes exactly the 410 tokens; the others move to the sandbox or are kept aside")
    func mixedCampaign() async throws {
        let count = 20_000
        let tokens = (0..<count).map(Stack.token)
        let gone = stride(from: 0, to: count, by: 50).map { tokens[$0] }  // 2%
        let rejected = stride(from: 1, to: count, by: 100).map { tokens[$0] }  // 1%
        let sandboxTokens = Set(rejected.enumerated().filter { $0.offset.isMultiple(of: 2) }.map(\.element))
        let badEverywhere = Set(rejected).subtracting(sandboxTokens)
        try await Stack.with(
            simulator: { $0.devices.bad = Set(badEverywhere.map(\.hex)) },
            productionSimulator: { simulator in
                simulator.devices.unregistered = Dictionary(uniqueKeysWithValues: gone.map { ($0.hex, 5_000) })
                simulator.devices.bad = Set(rejected.map(\.hex))
            }
        ) { stack in
            try await stack.register(tokens, tags: ["all"], environment: .production)
            let worker = try WorkerProcess.start(stack: stack)
            defer { worker.forceStop() }
            try await stack.publish(Stack.job(id: "mixed", audience: .broadcast, environment: .production))
            let report = try await eventually("the campaign and its registry changes to finish", timeout: .seconds(300)) {
                try await stack.report("mixed")
            } until: {
                $0.isComplete && $0.removed + $0.movedEnvironment + $0.suspect == gone.count + rejected.count
            }
            #expect(report.state == .complete && report.control.breaker == .cleared)
            #expect(report.failedByReason == ["Unregistered": gone.count, "BadDeviceToken": rejected.count])
            #expect(report.removed == gone.count)
            #expect(report.movedEnvironment == sandboxTokens.count)
            #expect(report.suspect == badEverywhere.count)

            let registry = stack.registry
            let devices = try await registry.deviceCount(app: Stack.app)
            #expect(devices.total == count - gone.count, "exactly the 410 tokens left: \(devices)")
            #expect(devices.sandbox == sandboxTokens.count && devices.suspectProduction == badEverywhere.count)
            #expect(devices.production == count - gone.count - rejected.count)
            for token in gone.prefix(50) {
                #expect(try await registry.device(app: Stack.app, token: token) == nil)
            }
            for token in sandboxTokens.prefix(50) {
                let device = try await registry.device(app: Stack.app, token: token)
                #expect(device?.environment == .sandbox && device?.suspicion == nil && device?.tags == ["all"])
            }
            for token in badEverywhere.prefix(50) {
                let device = try await registry.device(app: Stack.app, token: token)
                #expect(device?.environment == .production && device?.suspicion?.reason == "BadDeviceToken")
            }
            let probes = try await stack.simulator.counters()
            #expect(Set(probes.acceptedPerToken.keys) == Set(sandboxTokens.map(\.hex)), "one silent probe each, accepted where the token lives")
            #expect(probes.rejections["BadDeviceToken"] == badEverywhere.count)

            let suspects = try await CLIProcess.run(["devices", "suspects", "--config", stack.configurationPath, "--app", Stack.app, "--json"])
            #expect(suspects.standardOutput.split(separator: "\n").count == badEverywhere.count)
            let restored = try await CLIProcess.run([
                "devices", "restore", "--config", stack.configurationPath, "--app", Stack.app, try #require(badEverywhere.first).hex,
            ])
            #expect(restored.status == 0, "\(restored.standardError)")
            #expect(try await registry.deviceCount(app: Stack.app).suspectProduction == badEverywhere.count - 1)
            try await worker.stopGracefully()
        }
    }
}
