import APNs
import APNsCore
import APNsSimulator
import ArgumentParser
import EmbeddedStack
import Foundation
import Kafka
import Logging
import PushCore
import PushStore
import Redis

/// The soak: a steady stream of campaigns for a long time (30 minutes by default) through real
/// `pushfleet worker` processes, with the simulator answering in 50 ms and refusing a share of
/// requests with 503 (so the resend buffer is in use). Every 10 s it samples the workers' RSS and
/// open file descriptors, Redis memory, the resend buffer's depth and the throughput; at the end
/// it checks every campaign was delivered once to every device and judges the curves flat (see
/// ``SoakOutcome/judge()``).
struct SoakBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Campaigns at a steady rate for a long time: RSS, open files, Redis memory, resend depth and throughput, judged flat.")

    @Flag(help: "Quick mode for CI: 2 minutes, 5,000 devices per campaign at 1,000/s; results named soak-quick.")
    var quick = false
    @Option(help: "How long campaigns are published (default 30; 2 with --quick).") var minutes: Double?
    @Option(help: "Registered devices; each campaign is a broadcast to all of them (default 30,000; 5,000 with --quick).")
    var devices: Int?
    @Option(
        help:
            "Notifications per second: a campaign is published every devices/rate seconds, throttled to this rate (default 3,000; 1,000 with --quick)."
    )
    var rate: Double?
    @Option(help: "Worker processes.") var workers = 2
    @Option(help: "The simulator's answer time, milliseconds.") var latencyMilliseconds = 50
    @Option(help: "The share of requests the simulator answers 503 (they go through the resend buffer).")
    var serviceUnavailableRate = 0.01
    @Option(help: "Seconds between samples.") var sampleSeconds: Double = 10
    @Option(help: "The pushfleet binary (build it in release mode).") var pushfleet = ".build/release/pushfleet"
    @Option(help: "Log level of the worker processes (their standard error).") var workerLogLevel = "error"
    @Option(help: "The chart script (matplotlib).") var plotScript = "benchmarks/plot_soak.py"
    @Option(help: "The Python interpreter with matplotlib.") var python = "python3"
    @OptionGroup var results: ResultOptions

    func run() async throws {
        let plan = SoakPlan(
            quick: quick, minutes: minutes ?? (quick ? 2 : 30), devices: devices ?? (quick ? 5_000 : 30_000),
            rate: rate ?? (quick ? 1_000 : 3_000), workers: workers, latencyMilliseconds: latencyMilliseconds,
            serviceUnavailableRate: serviceUnavailableRate, sampleSeconds: sampleSeconds)
        guard plan.devices > 0, plan.rate > 0, plan.minutes > 0, plan.workers > 0, plan.sampleSeconds > 0 else {
            throw ValidationError("devices, rate, minutes, workers and sample-seconds must be positive")
        }
        print(
            "soak: \(plan.minutes) min, a \(plan.devices)-device broadcast every \(String(format: "%.1f", plan.period)) s at \(Int(plan.rate))/s, "
                + "\(plan.workers) workers, answers in \(plan.latencyMilliseconds) ms, \(plan.serviceUnavailableRate * 100)% 503")
        var logger = Logger(label: "pushfleet.bench.soak")
        logger.logLevel = .error
        var outcome = try await SoakRun(plan: plan, pushfleet: pushfleet, workerLogLevel: workerLogLevel, logger: logger).run()
        outcome.judge()
        print(outcome.line)
        let name = quick ? "soak-quick" : "soak"
        try results.write(name: name, result: outcome, markdown: outcome.markdown(chart: "\(name).png"))
        try results.plot(name: name, python: python, script: plotScript)
        if !outcome.violations.isEmpty {
            throw BenchmarkError.failed("the soak is below expectations: " + outcome.violations.joined(separator: "; "))
        }
    }
}

struct SoakPlan: Codable {
    var quick: Bool
    var minutes: Double
    var devices: Int
    var rate: Double
    var workers: Int
    var latencyMilliseconds: Int
    var serviceUnavailableRate: Double
    var sampleSeconds: Double

    /// Seconds between two campaigns: each takes this long at the rate.
    var period: Double { Double(devices) / rate }
    var seconds: Double { minutes * 60 }
    var latency: APNsSimulatorLatency { .fixed(.milliseconds(latencyMilliseconds)) }
}

/// One soak on a fresh embedded stack.
struct SoakRun {
    let plan: SoakPlan
    let pushfleet: String
    let workerLogLevel: String
    let logger: Logger

    func run() async throws -> SoakOutcome {
        var options = EmbeddedStack.Options()
        options.deliveryPartitions = 16
        options.jobPartitions = 8
        options.simulatorThreads = 1
        // The production resend policy (first retry after 1 s), not the stack's quick one: the
        // buffer then holds what a real deployment holds.
        options.resendSettings = []
        options.apnsRequestTimeoutMilliseconds = Int(APNsClientConfiguration().requestTimeout.components.seconds * 1_000)
        let stack = try await EmbeddedStack.start(options, logger: logger) { $0.latency = plan.latency }
        defer { try? FileManager.default.removeItem(at: stack.directory) }
        let fleet = WorkerFleet(binary: pushfleet, stack: stack, logLevel: workerLogLevel)
        return try await CampaignHarness.withClients(stack: stack, fleet: fleet, logger: logger) { producer, redis in
            try await CampaignHarness.register(plan.devices, shards: stack.options.registryShards, redis: redis)
            return try await soak(stack: stack, fleet: fleet, producer: producer, redis: redis)
        }
    }

    private func soak(stack: EmbeddedStack, fleet: WorkerFleet, producer: KafkaProducer, redis: any RedisCommands) async throws -> SoakOutcome {
        try fleet.start(plan.workers)
        let jobs = JobStore(client: redis)
        try await CampaignHarness.warmUp(producer: producer, redis: redis)
        try await stack.simulator.setFaults(APNsSimulatorFaults(serviceUnavailableRate: plan.serviceUnavailableRate), latency: plan.latency)
        try await stack.simulator.reset()

        let start = ContinuousClock.now
        let end = start + .milliseconds(Int(plan.seconds * 1_000))
        // Campaigns on a fixed schedule, whatever the previous one's progress: a steady offer.
        let publisher = Task { () throws -> Int in
            var published = 0
            while true {
                let due = start + .milliseconds(Int(Double(published) * plan.period * 1_000))
                guard due < end else { return published }
                try await Task.sleep(until: due)
                try await CampaignHarness.publish(campaign(Self.campaignID(published)), producer: producer)
                published += 1
            }
        }
        var samples: [SoakOutcome.Sample] = []
        var previous = (seconds: 0.0, accepted: 0)
        var next = start
        while next < end {
            next = next + .milliseconds(Int(plan.sampleSeconds * 1_000))
            try await Task.sleep(until: min(next, end))
            let sample = try await sample(at: (ContinuousClock.now - start).seconds, previous: previous, stack: stack, fleet: fleet, redis: redis)
            previous = (sample.seconds, sample.accepted)
            samples.append(sample)
            print(sample.line)
        }
        let published = try await publisher.value

        // Drain: every campaign settled, or no progress for a minute. A settled campaign is not
        // read again.
        var campaigns = [Int](repeating: 0, count: published)
        var lastProgress = ContinuousClock.now
        var settled = -1
        while true {
            fleet.sample()
            for index in campaigns.indices where campaigns[index] < plan.devices {
                campaigns[index] = try await jobs.statistics(jobID: Self.campaignID(index))["accepted"] ?? 0
            }
            let done = campaigns.filter { $0 >= plan.devices }.count
            if done == published { break }
            if done > settled {
                settled = done
                lastProgress = .now
            } else if ContinuousClock.now - lastProgress > .seconds(60) {
                break
            }
            try await Task.sleep(for: .seconds(1))
        }
        let drainSeconds = (ContinuousClock.now - start).seconds - plan.seconds
        let counters = try await stack.simulator.counters()
        let footprint = try await Self.retainedBytes(jobID: Self.campaignID(published / 2), redis: redis)
        fleet.sample()
        fleet.stopAll()
        return SoakOutcome(
            plan: plan, campaigns: published, acceptedPerCampaign: campaigns, simulatorAccepted: counters.accepted,
            simulatorRequests: counters.requests, rejections: counters.rejections, drainSeconds: drainSeconds,
            retainedBytesPerCampaign: footprint, workersStarted: fleet.started, workerEnds: fleet.ended, samples: samples)
    }

    private func sample(
        at seconds: Double, previous: (seconds: Double, accepted: Int), stack: EmbeddedStack, fleet: WorkerFleet, redis: any RedisCommands
    ) async throws -> SoakOutcome.Sample {
        fleet.sample()
        let accepted = try await stack.simulator.acceptedCount()
        let usedMemory = try await ResourceUsage.redisUsedMemory(redis)
        let depth = try await ResendBuffer(client: redis).depth(app: EmbeddedStack.app)
        let pids = fleet.runningIdentifiers
        return SoakOutcome.Sample(
            seconds: seconds, accepted: accepted,
            perSecond: Double(accepted - previous.accepted) / max(seconds - previous.seconds, 0.001),
            workerRSSMegabytes: pids.map { Double(ResourceUsage.memoryKilobytes($0, field: "VmRSS")) / 1024 },
            workerOpenFiles: pids.map(ResourceUsage.openFiles), redisUsedMegabytes: Double(usedMemory) / 1_048_576,
            resendDepth: depth)
    }

    /// What one finished campaign keeps in Redis until its keys expire (7 days): the sum of
    /// `MEMORY USAGE` over its keys and its sent-state ranges' keys.
    static func retainedBytes(jobID: String, redis: any RedisCommands) async throws -> Int {
        var total = 0
        for pattern in ["pf:{job:\(jobID)}:*", "pf:{sent:\(jobID):*"] {
            var cursor = "0"
            repeat {
                let reply = try await redis.send("SCAN", .string(cursor), "MATCH", .string(pattern), "COUNT", "1000")
                guard let parts = reply.array, parts.count == 2, let next = parts[0].string, let keys = parts[1].array else {
                    throw BenchmarkError.failed("unexpected SCAN reply")
                }
                for key in keys.compactMap(\.string) {
                    total += Int(try await redis.send("MEMORY", "USAGE", .string(key)).int ?? 0)
                }
                cursor = next
            } while cursor != "0"
        }
        return total
    }

    static func campaignID(_ n: Int) -> String { "soak-\(n)" }

    /// A broadcast to every registered device, throttled to the plan's rate.
    private func campaign(_ id: String) -> PushJob {
        PushJob(
            id: id, app: EmbeddedStack.app, environment: .sandbox, audience: .broadcast,
            notification: APNsPayload(["aps": ["alert": ["title": "Soak", "body": "one of a steady stream of campaigns"]]]),
            headers: PushHeaders(pushType: .alert), throttle: ThrottleOverride(ratePerSecond: plan.rate))
    }
}

struct SoakOutcome: Codable {
    struct Sample: Codable {
        var seconds: Double
        /// Requests the simulator accepted since the soak began.
        var accepted: Int
        /// Accepted per second since the previous sample.
        var perSecond: Double
        var workerRSSMegabytes: [Double]
        var workerOpenFiles: [Int]
        var redisUsedMegabytes: Double
        var resendDepth: Int

        var line: String {
            String(
                format: "%6.0f s  %7.0f/s  RSS %@ MB  fds %@  Redis %.1f MB  resend %d", seconds, perSecond,
                workerRSSMegabytes.map { String(format: "%.0f", $0) }.joined(separator: "/"),
                workerOpenFiles.map(String.init).joined(separator: "/"), redisUsedMegabytes, resendDepth)
        }
    }

    var plan: SoakPlan
    var campaigns: Int
    /// Each campaign's `accepted` statistic: every one must reach the device count.
    var acceptedPerCampaign: [Int]
    var simulatorAccepted: Int
    var simulatorRequests: Int
    var rejections: [String: Int]
    /// Seconds after the last publication until every campaign settled.
    var drainSeconds: Double
    /// What one campaign keeps in Redis until its keys expire.
    var retainedBytesPerCampaign: Int
    var workersStarted: Int
    var workerEnds: [WorkerFleet.Ended]
    var samples: [Sample]
    /// Filled by ``judge()``.
    var figures = Figures()
    var violations: [String] = []

    struct Figures: Codable {
        var missed = 0
        var acceptedTwice = 0
        var meanPerSecond = 0.0
        var lowestPerSecond = 0.0
        /// Early window (20–40% of the run) against the late one (the last 20%).
        var rssEarlyMegabytes = 0.0
        var rssLateMegabytes = 0.0
        var openFilesEarly = 0
        var openFilesLate = 0
        var redisEarlyMegabytes = 0.0
        var redisLateMegabytes = 0.0
        /// The late window's Redis memory less what the campaigns published between the two
        /// windows retain by design.
        var redisLateLessRetainedMegabytes = 0.0
        var resendDepthEarlyMax = 0
        var resendDepthLateMax = 0
    }

    /// Every campaign delivered to every device exactly once, no worker crashed, the rate held,
    /// and nothing grows between the early window (20–40% of the run; the first 20% is warm-up:
    /// pools, allocator arenas and Kafka buffers filling) and the late one (the last 20%):
    /// worker RSS within 10% (20% in quick mode, whose windows are seconds apart), open files
    /// within 4 per worker, Redis memory within 10% once the campaigns' retained state is taken
    /// away, the resend buffer's deepest point within twice the early one plus the 503s of one
    /// sample interval.
    mutating func judge() {
        let delivered = acceptedPerCampaign.reduce(0) { $0 + min($1, plan.devices) }
        figures.missed = campaigns * plan.devices - delivered
        figures.acceptedTwice = max(0, simulatorAccepted - delivered)
        if figures.missed > 0 { violations.append("\(figures.missed) notifications missed") }
        if figures.acceptedTwice > 0 { violations.append("\(figures.acceptedTwice) accepted twice") }
        if workerEnds.contains(where: { !$0.expected }) { violations.append("a worker crashed or exited with an error") }
        if workersStarted != plan.workers { violations.append("\(workersStarted - plan.workers) workers restarted") }

        let steady = samples.dropFirst()
        guard !steady.isEmpty else {
            violations.append("too short to sample")
            return
        }
        figures.meanPerSecond =
            Double((samples.last?.accepted ?? 0) - samples[0].accepted) / max((samples.last?.seconds ?? 0) - samples[0].seconds, 0.001)
        figures.lowestPerSecond = steady.map(\.perSecond).min() ?? 0
        if figures.meanPerSecond < 0.9 * plan.rate {
            violations.append(String(format: "mean rate %.0f/s below 90%% of %.0f/s", figures.meanPerSecond, plan.rate))
        }
        if figures.lowestPerSecond < 0.7 * plan.rate {
            violations.append(String(format: "a sample at %.0f/s, below 70%% of %.0f/s", figures.lowestPerSecond, plan.rate))
        }

        let early = samples.filter { $0.seconds >= 0.2 * plan.seconds && $0.seconds <= 0.4 * plan.seconds }
        let late = samples.filter { $0.seconds >= 0.8 * plan.seconds }
        guard !early.isEmpty, !late.isEmpty else {
            violations.append("too few samples for an early and a late window")
            return
        }
        func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(max(values.count, 1)) }
        figures.rssEarlyMegabytes = mean(early.map { $0.workerRSSMegabytes.reduce(0, +) })
        figures.rssLateMegabytes = mean(late.map { $0.workerRSSMegabytes.reduce(0, +) })
        figures.openFilesEarly = early.map { $0.workerOpenFiles.reduce(0, +) }.max() ?? 0
        figures.openFilesLate = late.map { $0.workerOpenFiles.reduce(0, +) }.max() ?? 0
        figures.redisEarlyMegabytes = mean(early.map(\.redisUsedMegabytes))
        figures.redisLateMegabytes = mean(late.map(\.redisUsedMegabytes))
        let campaignsBetween = (mean(late.map(\.seconds)) - mean(early.map(\.seconds))) / plan.period
        figures.redisLateLessRetainedMegabytes = figures.redisLateMegabytes - campaignsBetween * Double(retainedBytesPerCampaign) / 1_048_576
        figures.resendDepthEarlyMax = early.map(\.resendDepth).max() ?? 0
        figures.resendDepthLateMax = late.map(\.resendDepth).max() ?? 0

        let rssAllowance = plan.quick ? 1.2 : 1.1
        if figures.rssLateMegabytes > rssAllowance * figures.rssEarlyMegabytes {
            violations.append(String(format: "worker RSS grew from %.0f to %.0f MB", figures.rssEarlyMegabytes, figures.rssLateMegabytes))
        }
        if figures.openFilesLate > figures.openFilesEarly + 4 * plan.workers {
            violations.append("open files grew from \(figures.openFilesEarly) to \(figures.openFilesLate)")
        }
        if figures.redisLateLessRetainedMegabytes > 1.1 * figures.redisEarlyMegabytes {
            violations.append(
                String(
                    format: "Redis memory grew from %.1f to %.1f MB (%.1f MB less the campaigns' retained state)", figures.redisEarlyMegabytes,
                    figures.redisLateMegabytes, figures.redisLateLessRetainedMegabytes))
        }
        let oneInterval = Int((plan.rate * plan.sampleSeconds * plan.serviceUnavailableRate).rounded(.up))
        if figures.resendDepthLateMax > 2 * figures.resendDepthEarlyMax + oneInterval {
            violations.append("the resend buffer grew from \(figures.resendDepthEarlyMax) to \(figures.resendDepthLateMax) entries")
        }
    }

    var line: String {
        String(
            format:
                "soak: %d campaigns, missed %d, accepted twice %d, %.0f/s (lowest %.0f/s), RSS %.0f → %.0f MB, fds %d → %d, Redis %.1f → %.1f MB, resend max %d → %d%@",
            campaigns, figures.missed, figures.acceptedTwice, figures.meanPerSecond, figures.lowestPerSecond, figures.rssEarlyMegabytes,
            figures.rssLateMegabytes, figures.openFilesEarly, figures.openFilesLate, figures.redisEarlyMegabytes, figures.redisLateMegabytes,
            figures.resendDepthEarlyMax, figures.resendDepthLateMax,
            violations.isEmpty ? "" : " — BELOW EXPECTATIONS: " + violations.joined(separator: "; "))
    }

    func markdown(chart: String) -> String {
        let f = figures
        return [
            "A fresh embedded stack (mock Kafka and the simulator in the benchmark process, one redis-server) and \(plan.workers) `pushfleet worker` processes. For \(plan.minutes) minutes a broadcast to all \(plan.devices) registered devices is published every \(String(format: "%.1f", plan.period)) s, each throttled to \(Int(plan.rate))/s, so the offer is a steady \(Int(plan.rate)) notifications/s. The simulator answers every request in \(plan.latencyMilliseconds) ms and \(String(format: "%g", plan.serviceUnavailableRate * 100))% of them with 503, which go through the resend buffer. Sampled every \(String(format: "%g", plan.sampleSeconds)) s; *early* is 20–40% of the run (the first 20% is warm-up), *late* the last 20%.",
            "",
            "![throughput, worker RSS, open files, Redis memory and resend depth over time](\(chart))",
            "",
            "| figure | early | late | expectation | |",
            "|---|---|---|---|---|",
            "| worker RSS, all workers (MB) | \(String(format: "%.1f", f.rssEarlyMegabytes)) | \(String(format: "%.1f", f.rssLateMegabytes)) | late ≤ \(plan.quick ? "1.2" : "1.1")× early | \(f.rssLateMegabytes <= (plan.quick ? 1.2 : 1.1) * f.rssEarlyMegabytes ? "flat" : "**grows**") |",
            "| open file descriptors, all workers (max) | \(f.openFilesEarly) | \(f.openFilesLate) | late ≤ early + \(4 * plan.workers) | \(f.openFilesLate <= f.openFilesEarly + 4 * plan.workers ? "flat" : "**grows**") |",
            "| Redis used memory (MB) | \(String(format: "%.2f", f.redisEarlyMegabytes)) | \(String(format: "%.2f", f.redisLateMegabytes)) (\(String(format: "%.2f", f.redisLateLessRetainedMegabytes)) less retained campaigns) | late less retained ≤ 1.1× early | \(f.redisLateLessRetainedMegabytes <= 1.1 * f.redisEarlyMegabytes ? "flat" : "**grows**") |",
            "| resend buffer depth (max) | \(f.resendDepthEarlyMax) | \(f.resendDepthLateMax) | late ≤ 2× early + one interval's 503s | \(violations.contains { $0.hasPrefix("the resend buffer") } ? "**grows**" : "flat") |",
            "",
            "| campaigns | notifications | missed | accepted twice | mean rate (/s) | lowest sample (/s) | drain after the last publication (s) | retained per campaign (bytes, 7-day TTL) | simulator requests | rejections | workers started / ended | meets expectations |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
            "| \(campaigns) | \(campaigns * plan.devices) | \(f.missed) | \(f.acceptedTwice) | \(String(format: "%.0f", f.meanPerSecond)) | \(String(format: "%.0f", f.lowestPerSecond)) | \(String(format: "%.1f", drainSeconds)) | \(retainedBytesPerCampaign) | \(simulatorRequests) | \(rejections.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")) | \(workersStarted) / \(workerEnds.count) | \(violations.isEmpty ? "yes" : "**no**: " + violations.joined(separator: "; ")) |",
        ].joined(separator: "\n")
    }
}
