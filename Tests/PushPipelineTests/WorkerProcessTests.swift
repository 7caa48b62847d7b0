import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import PipelineTestSupport
import PushCore
import PushJobs
import Testing

@Suite("Worker processes sharing a campaign", .serialized)
struct WorkerProcessTests {
    typealias Stack = PipelineStack

    @Test("SIGKILL of one of two workers mid-campaign misses no token; SIGTERM stops the rest cleanly")
    func killedWorkerIsReplaced() async throws {
        let total = 20_000
        let tokens = (0..<total).map(Stack.token)
        // A realistic answer time keeps the campaign running long enough to kill a worker mid-way.
        try await Stack.with(simulator: { $0.latency = .uniform(.milliseconds(2), .milliseconds(6)) }) { stack in
            try await stack.register(tokens)
            // The worker to be killed holds at most this many notifications sent and unsettled.
            let window = 200
            let first = try WorkerProcess.start(stack: stack, environment: ["PUSHFLEET__WORKER__NOTIFICATIONS_IN_FLIGHT": "\(window)"])
            let second = try WorkerProcess.start(stack: stack)
            defer {
                first.forceStop()
                second.forceStop()
            }
            try await stack.publish(Stack.job(id: "campaign", audience: .broadcast))
            let beforeKill = try await eventually("the campaign to be under way") {
                try await stack.simulator.counters().accepted
            } until: { $0 >= total / 5 }
            first.kill()
            let replacement = try WorkerProcess.start(stack: stack)
            defer { replacement.forceStop() }

            let report = try await eventually("the campaign to finish", timeout: .seconds(300)) {
                try await stack.report("campaign")
            } until: { $0.isComplete }
            let seen = try await stack.simulator.counters()
            let (missed, sentTwice) = coverage(of: tokens, seen)
            print("worker SIGKILL: killed after \(beforeKill) acceptances; \(missed.count) tokens missed, \(sentTwice) sent twice; duplicates skipped by markers \(report.duplicatesSkipped)")
            #expect(missed.isEmpty)
            #expect(report.accepted == total)
            // Sent twice: at most what the killed worker had sent and not yet settled, which its
            // in-flight window bounds (a slot returns when the outcome is settled). Any other
            // copy of a chunk (the next owner's, or one the expand stage published again) waits
            // for the chunk's lease, then skips what was settled.
            #expect(sentTwice <= window)

            try await second.stopGracefully()
            try await replacement.stopGracefully()
        }
    }
}
