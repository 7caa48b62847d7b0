import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import Kafka
import LocalRedis
import PipelineTestSupport
import PushConfiguration
import PushCore
import PushJobs
import PushPipeline
import PushStore
import Redis
import Testing

@Suite("Pipeline end to end: embedded Kafka, redis-server, APNs simulator", .serialized)
struct PipelineEndToEndTests {
    typealias Stack = PipelineStack

    @Test("A broadcast to 100,000 devices reaches each valid one exactly once; unregistered ones leave the registry")
    func broadcast() async throws {
        let total = 100_000
        let tokens = (0..<total).map(Stack.token)
        // Every 100th device uninstalled the app: 1,000 answers 410 Unregistered.
        let unregistered = stride(from: 0, to: total, by: 100).map { tokens[$0] }
        let unregisteredAt: Int64 = 5_000  // after the devices' registration (1,000)
        try await Stack.with(
            simulator: { $0.devices.unregistered = Dictionary(uniqueKeysWithValues: unregistered.map { ($0.hex, unregisteredAt) }) }
        ) { stack in
            try await stack.register(tokens)
            try await stack.withWorker { counters in
                try await stack.publish(Stack.job(id: "broadcast-1", audience: .broadcast))
                let report = try await eventually("the broadcast to finish") {
                    try await stack.report("broadcast-1")
                } until: {
                    $0.isComplete && $0.removed == unregistered.count
                }
                #expect(report.targeted == total)
                #expect(report.expanded == total)
                #expect(report.accepted == total - unregistered.count)
                #expect(report.failedByReason == ["Unregistered": unregistered.count])
                #expect(report.invalidTokens == unregistered.count)
                #expect(report.sent == total)
                #expect(report.deadLettered == 0)
                #expect(report.shardsDone == 16)
                #expect(counters[.feedbackRemoved] == unregistered.count)
            }
            let seen = try await stack.simulator.counters()
            let invalid = Set(unregistered.map(\.hex))
            #expect(seen.accepted == total - unregistered.count)
            #expect(seen.acceptedPerToken.count == total - unregistered.count)
            #expect(seen.acceptedPerToken.values.allSatisfy { $0 == 1 })
            #expect(seen.acceptedPerToken.keys.allSatisfy { !invalid.contains($0) })
            let count = try await stack.registry.deviceCount(app: Stack.app)
            #expect(count.sandbox == total - unregistered.count)
            for token in unregistered.prefix(20) {
                #expect(try await stack.registry.device(app: Stack.app, token: token) == nil)
            }
        }
    }

    @Test("openids reach each user's last device; tags all/any/none select the right devices")
    func openIDsAndTags() async throws {
        try await Stack.with { stack in
            let registry = stack.registry
            let app = Stack.app
            // u1 logs in on 1 then 2: only 2 is u1's. u2 is on 3. 4 is u3's then u4's (u3 has no device).
            try await registry.bind(app: app, token: Stack.token(1), environment: .sandbox, openID: "u1")
            try await registry.bind(app: app, token: Stack.token(2), environment: .sandbox, openID: "u1")
            try await registry.bind(app: app, token: Stack.token(3), environment: .sandbox, openID: "u2")
            try await registry.bind(app: app, token: Stack.token(4), environment: .sandbox, openID: "u3")
            try await registry.bind(app: app, token: Stack.token(4), environment: .sandbox, openID: "u4")
            // A production device of u5 does not qualify for a sandbox job.
            try await registry.bind(app: app, token: Stack.token(5), environment: .production, openID: "u5")
            // Tags on devices 10...29.
            var expectedAll: Set<String> = []
            var expectedAnyNone: Set<String> = []
            for n in 10..<30 {
                var tags: [String] = []
                if n % 2 == 0 { tags.append("sports") }
                if n % 3 == 0 { tags.append("news") }
                if n % 5 == 0 { tags.append("muted") }
                try await registry.bind(app: app, token: Stack.token(n), environment: .sandbox, tags: tags)
                if n % 2 == 0 && n % 3 == 0 { expectedAll.insert(Stack.token(n).hex) }
                if (n % 2 == 0 || n % 3 == 0) && n % 5 != 0 { expectedAnyNone.insert(Stack.token(n).hex) }
            }

            try await stack.withWorker { _ in
                try await stack.publish(Stack.job(id: "openids", audience: .openIDs(["u1", "u2", "u3", "u4", "u5", "nobody"])))
                let openIDs = try await eventually("the openid job") {
                    try await stack.report("openids")
                } until: {
                    $0.isComplete
                }
                #expect(openIDs.targeted == 3)
                #expect(openIDs.unknownOpenIDs == 2)  // u3 (moved away) and nobody
                #expect(openIDs.otherEnvironment == 1)  // u5
                var seen = try await stack.simulator.counters()
                #expect(Set(seen.acceptedPerToken.keys) == Set([2, 3, 4].map { Stack.token($0).hex }))

                try await stack.simulator.reset()
                try await stack.publish(Stack.job(id: "all", audience: .tags(TagExpression(all: ["sports", "news"]))))
                _ = try await eventually("the tags-all job") {
                    try await stack.report("all")
                } until: {
                    $0.isComplete
                }
                seen = try await stack.simulator.counters()
                #expect(Set(seen.acceptedPerToken.keys) == expectedAll)

                try await stack.simulator.reset()
                try await stack.publish(Stack.job(id: "any-none", audience: .tags(TagExpression(any: ["sports", "news"], none: ["muted"]))))
                let anyNone = try await eventually("the tags-any-none job") {
                    try await stack.report("any-none")
                } until: {
                    $0.isComplete
                }
                seen = try await stack.simulator.counters()
                #expect(Set(seen.acceptedPerToken.keys) == expectedAnyNone)
                #expect(anyNone.accepted == expectedAnyNone.count)
            }
        }
    }

    @Test("Redis away mid-campaign: the worker waits, then finishes; nothing lost, nothing sent twice")
    func redisOutage() async throws {
        let total = 20_000
        let tokens = (0..<total).map(Stack.token)
        try await Stack.with { stack in
            try await stack.register(tokens)
            try await stack.withWorker { _ in
                try await stack.publish(Stack.job(id: "outage", audience: .broadcast))
                _ = try await eventually("the campaign to be under way") {
                    try await stack.simulator.counters().accepted
                } until: {
                    $0 >= total / 10
                }
                let redisServer = try #require(stack.stack.redisServer)
                await redisServer.pause()
                // Observed, not assumed: once Redis is away, acceptances stop (what was in flight
                // still lands, then nothing more is sent).
                var previous = try await stack.simulator.counters().accepted
                let stalledAt = try await eventually("sending to stop while Redis is away") { () async throws -> (Int, Int) in
                    try await Task.sleep(for: .seconds(1))
                    let now = try await stack.simulator.counters().accepted
                    defer { previous = now }
                    return (now, now - previous)
                } until: {
                    $0.1 == 0
                }
                #expect(stalledAt.0 < total)
                // The outage outlasts the Redis command timeout (5 s), so the worker's commands
                // fail and go through its retry with backoff, not just wait.
                try await Task.sleep(for: .seconds(6))
                #expect(try await stack.simulator.counters().accepted == stalledAt.0)
                await redisServer.resume()
                let report = try await eventually("the campaign to finish after the outage") {
                    try await stack.report("outage")
                } until: {
                    $0.isComplete
                }
                #expect(report.accepted == total)
                #expect(report.deadLettered == 0)
            }
            let seen = try await stack.simulator.counters()
            #expect(seen.acceptedPerToken.count == total)
            #expect(seen.acceptedPerToken.values.allSatisfy { $0 == 1 })
        }
    }

    @Test("Two copies of a chunk in flight at once: the second waits for the first's lease and sends nothing twice")
    func chunkCopiesInFlightTogether() async throws {
        let tokens = (0..<1_000).map(Stack.token)
        // Slow answers keep the first copy sending while the second copy is handed out.
        try await Stack.with(simulator: { $0.latency = .uniform(.milliseconds(20), .milliseconds(40)) }) { stack in
            try await stack.withWorker { counters in
                // As after a restart of the expand stage: the same chunk published twice, next to
                // each other on its partition, so the send stage (4 chunks in flight) takes both.
                let chunk = DeliveryChunk(
                    job: Stack.job(id: "copies", audience: .broadcast), chunkID: "s0-0", tokens: tokens, positions: tokens.indices.map(UInt32.init))
                try await stack.publish(chunk, copies: 2)
                _ = try await eventually("both copies to be handled") {
                    counters[.chunksSent]
                } until: {
                    $0 == 2
                }
                #expect(counters[.chunkLeaseWaits] == 1)
                #expect(counters[.duplicatesSkipped] == tokens.count)
            }
            let (missed, sentTwice) = coverage(of: tokens, try await stack.simulator.counters())
            #expect(missed.isEmpty)
            #expect(sentTwice == 0)
        }
    }

    @Test("A chunk whose lease a dead sender left behind is sent once that lease expires")
    func chunkLeftLeasedByADeadSender() async throws {
        let tokens = (0..<100).map(Stack.token)
        try await Stack.with { stack in
            try await stack.withWorker { counters in
                func publish(job: String) async throws {
                    try await stack.publish(
                        DeliveryChunk(
                            job: Stack.job(id: job, audience: .broadcast), chunkID: "t0", tokens: tokens, positions: tokens.indices.map(UInt32.init)))
                }
                // The worker is consuming once a first chunk went through.
                try await publish(job: "warm-up")
                _ = try await eventually("the first chunk to be sent") {
                    counters[.chunksSent]
                } until: {
                    $0 == 1
                }
                // A sender that died holding the next chunk: nobody extends or releases its lease.
                #expect(try await stack.jobs.leaseChunk(jobID: "orphan", chunkID: "t0", holder: "dead-sender", for: .milliseconds(1_500)))
                try await publish(job: "orphan")
                _ = try await eventually("the chunk to be sent") {
                    counters[.chunksSent]
                } until: {
                    $0 == 2
                }
                #expect(counters[.chunkLeaseWaits] == 1)
            }
            let seen = try await stack.simulator.counters()
            #expect(seen.accepted == 2 * tokens.count)
            #expect(Set(seen.acceptedPerToken.keys) == Set(tokens.map(\.hex)))
        }
    }

    @Test("With 10% of requests answered 503, every valid token is eventually accepted")
    func serviceUnavailable() async throws {
        let total = 3_000
        let tokens = (0..<total).map(Stack.token)
        // With the default 5 attempts, a token fails all of them with probability 10^-5: about
        // one run in 30 would dead-letter one of 3,000 tokens. 20 attempts make that 10^-20.
        var options = Stack.Options()
        options.resendSettings.append("max-attempts: 20")
        try await Stack.with(options, simulator: { $0.faults.serviceUnavailableRate = 0.1 }) { stack in
            try await stack.register(tokens)
            try await stack.withWorker { counters in
                try await stack.publish(Stack.job(id: "flaky", audience: .broadcast))
                let report = try await eventually("every token accepted") {
                    try await stack.report("flaky")
                } until: {
                    $0.isComplete && $0.accepted == total
                }
                #expect(report.retried > 0)
                #expect(report.deadLettered == 0)
                #expect(counters[.resent] > 0)
            }
            let seen = try await stack.simulator.counters()
            #expect(Set(seen.acceptedPerToken.keys) == Set(tokens.map(\.hex)))
            #expect((seen.rejections["ServiceUnavailable"] ?? 0) > 0)
        }
    }

    @Test("Resends the buffer gives up on end dead-lettered, each counted once through its tally")
    func resendsGivenUpAreCountedOnce() async throws {
        let total = 200
        let tokens = (0..<total).map(Stack.token)
        var options = Stack.Options()
        options.resendSettings.append("max-attempts: 2")
        try await Stack.with(options, simulator: { $0.faults.serviceUnavailableRate = 1 }) { stack in
            try await stack.register(tokens)
            try await stack.withWorker { _ in
                try await stack.publish(Stack.job(id: "refused", audience: .broadcast))
                let report = try await eventually("every resend given up") {
                    try await stack.report("refused")
                } until: {
                    $0.isComplete
                }
                #expect(report.deadLettered == total)
                #expect(report.retried == total)
                #expect(report.accepted == 0)
                // Each tally was applied and forgotten by the worker that wrote it.
                let resend = ResendBuffer(client: stack.redis)
                #expect(try await resend.pendingTallies(app: Stack.app, writtenBefore: .zero).isEmpty)
                #expect(try await resend.depth(app: Stack.app) == 0)
            }
        }
    }

    @Test("APNs's Retry-After keeps a notification in the resend buffer until it has passed")
    func retryAfter() async throws {
        let tokens = (0..<20).map(Stack.token)
        try await Stack.with(simulator: { $0.faults = APNsSimulatorFaults(tooManyRequestsRate: 1, retryAfter: "120") }) { stack in
            try await stack.register(tokens)
            let buffer = ResendBuffer(client: stack.redis)
            let published = StoreClock.system()
            try await stack.withWorker { _ in
                try await stack.publish(Stack.job(id: "told-to-wait", audience: .broadcast))
                _ = try await eventually("every notification in the resend buffer") {
                    try await buffer.depth(app: Stack.app)
                } until: {
                    $0 == tokens.count
                }
            }
            // Without the header the first resend would be due 0.8-1.2 s after the answer.
            let due = try #require(try await buffer.nextDueTime(app: Stack.app))
            #expect(due >= published + 120_000)
            #expect((try await stack.simulator.counters()).rejections == ["TooManyRequests": tokens.count])
        }
    }

    @Test("Sleep-after-N and the fleet-wide rate show in the worker's counters")
    func throttling() async throws {
        // The rate is slow enough that no machine outruns it: a worker would have to take 20 ms
        // per send for the bucket to refill faster than it empties. A fast rate (3,000/s with a
        // 100-permit burst) let a loaded CI worker send 1,200 without ever waiting.
        let total = 120
        let (rate, burst) = (50, 10)
        let tokens = (0..<total).map(Stack.token)
        var options = Stack.Options()
        options.appSettings = ["rate-per-second: \(rate)", "burst: \(burst)", "sleep-after: 20", "sleep-ms: 5"]
        try await Stack.with(options) { stack in
            try await stack.register(tokens)
            try await stack.withWorker { counters in
                let published = ContinuousClock.now
                try await stack.publish(Stack.job(id: "throttled", audience: .broadcast))
                let report = try await eventually("the throttled job") {
                    try await stack.report("throttled")
                } until: {
                    $0.isComplete
                }
                let elapsed = ContinuousClock.now - published
                #expect(report.accepted == total)
                // 120 sends with a pause after every 20: at least 5 pauses.
                #expect(counters[.sleepPauses] >= total / 20 - 1)
                // A 10-permit burst cannot cover 120 sends: the worker waited for permits, and
                // the bucket held the campaign to its rate: the 110 permits past the burst take
                // 2.2 s to accrue on any machine.
                #expect(counters[.ratePermitWaits] > 0)
                #expect(elapsed >= .seconds(Double(total - burst) / Double(rate)))
            }
            // A job override of the pause applies to that job alone.
            try await stack.withWorker { counters in
                try await stack.publish(
                    Stack.job(
                        id: "override", audience: .tokens(Array(tokens.prefix(100))), throttle: ThrottleOverride(sleepAfter: 10, sleepMilliseconds: 1)
                    ))
                _ = try await eventually("the override job") {
                    try await stack.report("override")
                } until: {
                    $0.isComplete
                }
                #expect(counters[.sleepPauses] >= 9)
            }
        }
    }

    @Test("Malformed jobs go to push.dlq with the reason and their bytes; the worker keeps going")
    func badInput() async throws {
        try await Stack.with { stack in
            let notJSON = Array("{not json".utf8)
            var unknownApp = Stack.job(id: "unknown-app", audience: .tokens([Stack.token(1)]))
            unknownApp.app = "no-such-app"
            var oversize = Stack.job(id: "oversize", audience: .tokens([Stack.token(1)]))
            oversize.notification = APNsPayload(["aps": ["alert": .string(String(repeating: "x", count: 5_000))]])
            let schemaViolation = Array(
                #"{"app":"news","environment":"sandbox","audience":{"tokens":["xyz"]},"notification":{"aps":{}},"headers":{"push-type":"alert"}}"#
                    .utf8)
            try await stack.withWorker { counters in
                try await stack.publish(raw: notJSON, key: "a")
                try await stack.publish(unknownApp)
                try await stack.publish(raw: Array(oversize.jsonData()), key: "oversize")
                try await stack.publish(raw: schemaViolation, key: "b")
                try await stack.publish(Stack.job(id: "good", audience: .tokens([Stack.token(7)])))
                let report = try await eventually("the good job after the bad ones") {
                    try await stack.report("good")
                } until: {
                    $0.isComplete
                }
                #expect(report.accepted == 1)
                let letters = try await stack.readTopic(PushTopic.deadLetters, count: 4).map { try DeadLetter.decode(from: Data($0.value)) }
                #expect(letters.count == 4)
                let byReason = Dictionary(grouping: letters, by: \.reason)
                #expect(byReason["malformed-json"]?.first?.original == Data(notJSON))
                #expect(byReason["unknown-app"]?.first?.field == "app")
                #expect(byReason["payload-too-large"]?.first?.field == "notification")
                #expect(byReason["invalid-token"]?.first?.field == "audience.tokens[0]")
                #expect(letters.allSatisfy { $0.source?.topic == PushTopic.jobs && $0.original != nil })
                #expect(counters[.deadLetteredMessages] == 4)
            }
        }
    }

    @Test("Garbage on every pipeline topic, and a message too large to dead-letter whole: each dead-lettered with its reason; the worker keeps going")
    func garbageOnEveryTopic() async throws {
        try await Stack.with { stack in
            // Bytes that are no JSON at all, on each topic the worker consumes.
            let garbage: [UInt8] = [0xFF, 0xFE, 0x00, 0x7B, 0x22, 0xC3, 0x28, 0x0A]
            // A message under Kafka's limit whose dead letter (base64, a third larger) is over it.
            let huge = (0..<900_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
            try await stack.withWorker { counters in
                for topic in [PushTopic.jobs, PushTopic.deliveries, PushTopic.feedback] {
                    _ = try await stack.producer.send(KafkaProducerMessage(topic: topic, key: "garbage", value: garbage))
                }
                _ = try await stack.producer.send(KafkaProducerMessage(topic: PushTopic.jobs, key: "huge", value: huge))
                try await stack.publish(Stack.job(id: "good", audience: .tokens([Stack.token(7)])))
                let report = try await eventually("the good job after the bad messages") {
                    try await stack.report("good")
                } until: {
                    $0.isComplete
                }
                #expect(report.accepted == 1)
                let letters = try await stack.readTopic(PushTopic.deadLetters, count: 4).map { try DeadLetter.decode(from: Data($0.value)) }
                #expect(letters.count == 4)
                #expect(Set(letters.compactMap(\.source?.topic)) == [PushTopic.jobs, PushTopic.deliveries, PushTopic.feedback])
                #expect(letters.allSatisfy { !$0.reason.isEmpty && !$0.message.isEmpty && $0.field != nil })
                let small = letters.filter { $0.originalSize == nil }
                #expect(small.count == 3 && small.allSatisfy { $0.original == Data(garbage) })
                let cut = try #require(letters.first { $0.originalSize != nil })
                #expect(cut.originalSize == huge.count)
                let kept = try #require(cut.original)
                #expect(kept.count > 500_000 && kept == Data(huge.prefix(kept.count)), "the first \(kept.count) bytes")
                #expect(counters[.deadLetteredMessages] == 4)
            }
        }
    }

    @Test(
        "Jobs in another format (a version field, the audience at the top) and a scheduled job whose app was removed before it was due: dead-lettered with the reason; the worker keeps going"
    )
    func foreignFormatsAndRemovedApps() async throws {
        try await Stack.with { stack in
            let job = Stack.job(id: "versioned", audience: .tokens([Stack.token(1)]))
            var valid = try #require(try JSONSerialization.jsonObject(with: job.jsonData()) as? [String: Any])
            // A producer on a format with a version number, and one on a flat format: PushFleet's
            // jobs have neither, and a field it does not know is never ignored.
            valid["version"] = 2
            let versioned = try JSONSerialization.data(withJSONObject: valid)
            valid["version"] = nil
            valid["id"] = "flat"
            valid["tokens"] = (valid["audience"] as? [String: Any])?["tokens"]
            valid["audience"] = nil
            let flat = try JSONSerialization.data(withJSONObject: valid)
            var scheduled = Stack.job(id: "removed-app", audience: .tokens([Stack.token(2)]))
            scheduled.app = EmbeddedStack.otherApp
            try await stack.withWorker { _ in
                // The worker has joined its groups once a first job went through.
                try await stack.publish(Stack.job(id: "now", audience: .tokens([Stack.token(1)])))
                _ = try await eventually("the worker to be ready") {
                    try await stack.report("now")
                } until: {
                    $0.isComplete
                }
                scheduled.sendAt = Date().addingTimeInterval(3)
                try await stack.publish(scheduled)
                _ = try await eventually("the job to be scheduled") {
                    try await stack.report("removed-app")
                } until: {
                    $0.scheduledAt != nil
                }
            }
            // The app is taken out of the configuration; the next worker releases its job when due.
            var withoutApp = stack.configuration
            withoutApp.apps[EmbeddedStack.otherApp] = nil
            try await stack.withWorker(configuration: withoutApp) { counters in
                try await stack.publish(raw: Array(versioned), key: "versioned")
                try await stack.publish(raw: Array(flat), key: "flat")
                try await stack.publish(Stack.job(id: "good", audience: .tokens([Stack.token(7)])))
                let report = try await eventually("the good job after the others") {
                    try await stack.report("good")
                } until: {
                    $0.isComplete
                }
                #expect(report.accepted == 1)
                _ = try await eventually("the scheduled job released") {
                    counters[.jobsReleased]
                } until: {
                    $0 == 1
                }
                let letters = try await stack.readTopic(PushTopic.deadLetters, count: 3).map { try DeadLetter.decode(from: Data($0.value)) }
                let byField = Dictionary(letters.map { ($0.field ?? "", $0) }) { first, _ in first }
                #expect(byField["version"]?.reason == "unknown-field")
                #expect(byField["version"]?.original == versioned)
                #expect(byField["tokens"]?.reason == "unknown-field")
                #expect(byField["app"]?.reason == "unknown-app")
                #expect(byField["app"]?.message.contains("'\(EmbeddedStack.otherApp)' is not configured") == true)
                #expect(counters[.jobsReleased] == 1)
                #expect(counters[.deadLetteredMessages] == 3)
            }
            #expect(try await stack.simulator.counters().accepted == 2, "the two good jobs; nothing of the foreign or removed app's jobs")
        }
    }

    @Test("A broadcast read a second time after the registry's shard count grew fans out as the first time: its report stays complete")
    func reExpansionAfterAReshardKeepsItsFanOut() async throws {
        try await Stack.with { stack in
            let tokens = (0..<2_000).map(Stack.token)
            try await stack.register(tokens)
            let job = Stack.job(id: "fan-out", audience: .broadcast)
            try await stack.withWorker { _ in
                try await stack.publish(job)
                let first = try await eventually("the broadcast") {
                    try await stack.report("fan-out")
                } until: {
                    $0.isComplete
                }
                #expect(first.accepted == tokens.count)
                let shards = first.shards
                // The shard count grows, then the job's message is read again (as after a
                // rebalance whose commit failed): the second expansion must not fan out to the
                // new count, whose tasks reuse the first ones' chunk ids over other devices.
                _ = try await stack.registry.reshard(app: Stack.app, to: shards * 4)
                try await stack.publish(job)
                let again = try await eventually("the second reading skipped") {
                    try await stack.report("fan-out")
                } until: {
                    $0.duplicatesSkipped >= tokens.count
                }
                #expect(again.shards == shards)
                #expect(again.targeted == tokens.count)
                #expect(again.isComplete)
                #expect(again.accepted == tokens.count, "nothing sent twice")
            }
        }
    }

    @Test("A job with a future send-at waits in the schedule and is sent when due")
    func scheduledJob() async throws {
        try await Stack.with { stack in
            try await stack.register([Stack.token(1)])
            try await stack.withWorker { counters in
                // The worker has joined its groups once a first job went through.
                try await stack.publish(Stack.job(id: "now", audience: .tokens([Stack.token(1)])))
                _ = try await eventually("the worker to be ready") {
                    try await stack.report("now")
                } until: {
                    $0.isComplete
                }
                var job = Stack.job(id: "later", audience: .tokens([Stack.token(1)]))
                job.sendAt = Date().addingTimeInterval(2)
                try await stack.publish(job)
                let waiting = try await eventually("the job to be scheduled") {
                    try await stack.report("later")
                } until: {
                    $0.scheduledAt != nil
                }
                #expect(waiting.expanded == 0)
                let report = try await eventually("the scheduled job to be sent") {
                    try await stack.report("later")
                } until: {
                    $0.isComplete
                }
                #expect(report.accepted == 1)
                #expect(counters[.jobsScheduled] == 1)
                #expect(counters[.jobsReleased] == 1)
                #expect(Int64(report.scheduledAt ?? 0) <= Int64(Date().timeIntervalSince1970 * 1000))
            }
        }
    }

    @Test("A refused provider credential suspends the app instead of burning its audience")
    func providerAuthentication() async throws {
        let tokens = (0..<300).map(Stack.token)
        var options = Stack.Options()
        options.simulatorTrustsKey = false
        try await Stack.with(options) { stack in
            try await stack.register(tokens)
            try await stack.withWorker { counters in
                try await stack.publish(Stack.job(id: "bad-key", audience: .broadcast))
                let report = try await eventually("every token parked") {
                    try await stack.report("bad-key")
                } until: {
                    $0.expansionComplete && $0.retried == tokens.count
                }
                #expect(report.accepted == 0)
                #expect(report.deadLettered == 0)
                #expect(counters[.providerSuspensions] >= 1)
                let suspension = try await AppSuspension(client: stack.redis).reason(app: Stack.app, environment: .sandbox)
                #expect(suspension == "InvalidProviderToken")
                let depth = try await ResendBuffer(client: stack.redis).depth(app: Stack.app)
                #expect(depth == tokens.count)
            }
            // The simulator saw far fewer requests than the audience.
            let seen = try await stack.simulator.counters()
            #expect(seen.requests < tokens.count / 2)
        }
    }
}
