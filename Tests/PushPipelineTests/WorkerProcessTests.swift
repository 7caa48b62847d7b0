import APNsCore
import APNsSimulator
import EmbeddedKafka
import EmbeddedStack
import Foundation
import Kafka
import LocalRedis
import PipelineTestSupport
import PushConfiguration
import PushCore
import PushJobs
import PushPipeline
import Spawn
import Synchronization
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
            let second = try WorkerProcess.start(stack: stack, observable: true)
            defer {
                first.forceStop()
                second.forceStop()
            }
            try await stack.publish(Stack.job(id: "campaign", audience: .broadcast))
            let beforeKill = try await eventually("the campaign to be under way") {
                try await stack.simulator.counters().accepted
            } until: {
                $0 >= total / 5
            }
            first.kill()
            // When every group has dropped the killed member (its session timed out) and each
            // survivor has heard of that round.
            let sessionTimeout = stack.configuration.kafka.sessionTimeoutMilliseconds
            let killNoticed = ContinuousClock.now + KafkaConsumerConfiguration.lostMemberNoticed(sessionTimeoutMilliseconds: sessionTimeout)
            let replacement = try WorkerProcess.start(stack: stack, observable: true)
            defer { replacement.forceStop() }

            let report = try await eventually("the campaign to finish", timeout: .seconds(300)) {
                try await stack.report("campaign")
            } until: {
                $0.isComplete
            }
            let seen = try await stack.simulator.counters()
            let (missed, sentTwice) = coverage(of: tokens, seen)
            print(
                "worker SIGKILL: killed after \(beforeKill) acceptances; \(missed.count) tokens missed, \(sentTwice) sent twice; duplicates skipped by markers \(report.duplicatesSkipped)"
            )
            #expect(missed.isEmpty)
            #expect(report.accepted == total)
            // Sent twice: at most what the killed worker had sent and not yet settled, which its
            // in-flight window bounds (a slot returns when the outcome is settled). Any other
            // copy of a chunk (the next owner's, or one the expand stage published again) waits
            // for the chunk's lease, then skips what was settled.
            #expect(sentTwice <= window)
            // Every copy carries the campaign's collapse id (its job id): a device shows it once.
            #expect(seen.shownTwice == 0, "\(seen.shownTwice) devices would show the campaign twice")

            // Each stop waits for the groups to settle first: the survivors hold every partition,
            // the killed member's included, no round is under way (none of their members in a
            // rebalance), and the round that drops the killed member has come (until its session
            // times out, a group can look settled with the dead member in it, holding none of a
            // small group's partitions). A Tansu coordinator never completes a round whose leader
            // leaves during it (docs/faults.md): the member left waits in that round until its
            // own stop ends at the shutdown deadline (exit 75, nothing lost), or for ever; on the
            // embedded cluster and a real Kafka the round would complete without the leaver.
            try await WorkerProcess.awaitGroups([second, replacement], stack: stack, notBefore: killNoticed)
            try await second.stopGracefully()
            try await WorkerProcess.awaitGroups([replacement], stack: stack)
            try await replacement.stopGracefully()
        }
    }
}

/// A worker told to stop while Redis or Kafka does not answer: it gives its work in progress
/// until its shutdown deadline, then cancels it and exits 75 (``ProcessStop``), within the
/// deadline and the cancellation allowance, never with a crash; nothing of the campaign is lost.
@Suite("Worker processes stopped while a server is away", .serialized)
struct WorkerStopTests {
    typealias Stack = PipelineStack

    /// The deadline the tests give the worker, and how long after it the process may take to end:
    /// the cancellation allowance (5 s) and a margin for a loaded machine.
    static let deadline: Duration = .seconds(2)
    static let allowance: Duration = .seconds(5)
    static let margin: Duration = .seconds(5)
    static let total = 20_000

    @Test("SIGTERM while Redis is frozen: exit 75 on the deadline, and a new worker finishes the campaign")
    func stopWhileRedisFrozen() async throws {
        try await Self.stopMidCampaign(
            jobID: "redis-frozen",
            fault: { stack in
                let server = try #require(stack.stack.redisServer)
                await server.pause()
            },
            repair: { stack in await stack.stack.redisServer?.resume() },
            expecting: [ProcessStop.ExitStatus.stoppedAtDeadline.code])
    }

    @Test("SIGTERM while the Kafka broker answers nothing for a minute: exit 75 on the deadline")
    func stopWhileKafkaSilent() async throws {
        try await Self.stopMidCampaign(
            jobID: "kafka-silent",
            fault: { stack in try stack.cluster.setBrokerRoundTripTime(1, milliseconds: 60_000) },
            repair: { stack in try stack.cluster.setBrokerRoundTripTime(1, milliseconds: 0) },
            expecting: [ProcessStop.ExitStatus.stoppedAtDeadline.code])
    }

    @Test("SIGTERM while Kafka requests fail: the worker stops within its deadline or exits 75 on it, without a crash")
    func stopWhileKafkaFails() async throws {
        let injecting = Mutex<Task<Void, any Error>?>(nil)
        try await Self.stopMidCampaign(
            jobID: "kafka-errors",
            fault: { stack in
                let cluster = stack.cluster
                injecting.withLock {
                    $0 = Task {
                        while !Task.isCancelled {
                            cluster.injectRequestErrors(.produce, errors: Array(repeating: .notLeaderOrFollower, count: 20))
                            cluster.injectRequestErrors(.fetch, errors: Array(repeating: .notLeaderOrFollower, count: 20))
                            cluster.injectRequestErrors(.offsetCommit, errors: Array(repeating: .requestTimedOut, count: 20))
                            cluster.injectRequestErrors(.heartbeat, errors: Array(repeating: .requestTimedOut, count: 20))
                            try await Task.sleep(for: .milliseconds(100))
                        }
                    }
                }
            },
            repair: { stack in
                injecting.withLock { $0?.cancel() }
                for api in [KafkaAPIKey.produce, .fetch, .offsetCommit, .heartbeat] { stack.cluster.clearRequestErrors(api) }
            },
            expecting: [ProcessStop.ExitStatus.stopped.code, ProcessStop.ExitStatus.stoppedAtDeadline.code],
            kafkaProperties: EmbeddedKafkaCluster.producerPropertiesForInjectedErrors)
    }

    /// A throttled broadcast under way on one worker; `fault`, then SIGTERM: the worker must end
    /// by exit (one of `statuses`) within the deadline, the allowance and a margin. After
    /// `repair`, a second worker finishes the campaign: no token missed.
    private static func stopMidCampaign(
        jobID: String,
        fault: (Stack) async throws -> Void,
        repair: (Stack) async throws -> Void,
        expecting statuses: Set<Int32>,
        kafkaProperties: [String: String] = [:]
    ) async throws {
        let tokens = (0..<total).map(Stack.token)
        var options = Stack.Options()
        options.kafkaProperties = kafkaProperties
        try await Stack.with(options, simulator: { $0.latency = .uniform(.milliseconds(2), .milliseconds(6)) }) { stack in
            try await stack.register(tokens)
            let overrides = ["PUSHFLEET__WORKER__SHUTDOWN_DEADLINE_SECONDS": "\(deadline.components.seconds)"]
            let worker = try WorkerProcess.start(stack: stack, environment: overrides)
            defer { worker.forceStop() }
            try await stack.publish(Stack.job(id: jobID, audience: .broadcast, throttle: ThrottleOverride(ratePerSecond: 2_000)))
            _ = try await eventually("the campaign to be under way") {
                try await stack.simulator.counters().accepted
            } until: {
                $0 >= 2_000
            }

            try await fault(stack)
            let (ended, after) = try await worker.stop()
            try await repair(stack)
            print("\(jobID): the worker ended after \(after): \(ended)")
            guard case .exited(let status) = ended else {
                Issue.record("the worker crashed (\(ended))")
                return
            }
            #expect(statuses.contains(status), "exit status \(status), expected one of \(statuses.sorted())")
            #expect(after < deadline + allowance + margin)

            let replacement = try WorkerProcess.start(stack: stack)
            defer { replacement.forceStop() }
            _ = try await eventually("the campaign to finish", timeout: .seconds(300)) {
                try await stack.report(jobID)
            } until: {
                $0.isComplete
            }
            let (missed, _) = coverage(of: tokens, try await stack.simulator.counters())
            #expect(missed.isEmpty)
            try await replacement.stopGracefully()
        }
    }
}
