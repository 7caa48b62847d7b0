import APNs
import APNsCore
import APNsSimulator
import ArgumentParser
import Crypto
import EmbeddedKafka
import EmbeddedStack
import Foundation
import Histogram
import Kafka
import Logging
import PushCore
import PushStore
import Redis

/// The capacity benchmark: the embedded stack (mock Kafka and the simulator in this process, a
/// redis-server), N registered devices, 1, 2 and 4 `pushfleet worker` processes, one broadcast
/// job each. Measures job publish → acceptance for every notification (throughput over time and
/// the latency distribution, in an HdrHistogram), worker CPU per 100k, RSS (at 10% of the
/// audience, at the end, peak: it must not grow with the audience), and in the same run h2load
/// (the machine's HTTP/2 limit) and the aioapns peer client against the same simulator. Writes
/// JSON, a Markdown table and a PNG chart (benchmarks/plot_capacity.py).
struct PipelineBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capacity",
        abstract: "Broadcast end to end through 1, 2, 4 worker processes, with h2load and aioapns as references.",
        aliases: ["pipeline"])

    @Flag(help: "Quick mode for CI: 100,000 devices, small reference runs, results named capacity-quick (under 2 minutes).")
    var quick = false
    @Option(help: "Registered devices; the broadcast goes to all of them (default 1,000,000; 100,000 with --quick).") var devices: Int?
    @Option(help: "Worker process counts to run, comma separated.") var workers = "1,2,4"
    @Option(
        help:
            "Partitions of push.deliveries (default: devices / 50,000 rounded up to a power of two, at least 64). The mock cluster keeps the newest 5 MB of each and drops older chunks unread: the expansion runs ahead of the sending by most of the audience."
    )
    var deliveryPartitions: Int32?
    @Option(
        help:
            "The app's registry shards (default: enough that every bucket hash stays small, ≤ 64 devices each: devices / 65,536 rounded up to a power of two, 16 to 2,048)."
    )
    var registryShards: Int?
    @Option(help: "The pushfleet binary (build it in release mode).") var pushfleet = ".build/release/pushfleet"
    @Option(help: "apns.connections-per-pool of the workers.") var connections = 4
    @Option(help: "Log level of the worker processes (their standard error).") var workerLogLevel = "warning"
    @Option(help: "apns.streams-per-connection of the workers.") var streams = 100
    @Option(help: "The simulator's answer time, uniform between LOW-HIGH milliseconds (0 for none).") var latencyMs = "2-10"
    @Option(help: "The h2load binary.") var h2load = "h2load"
    @Option(help: "Notifications of the h2load reference run (default 200,000; 50,000 with --quick).") var h2loadCount: Int?
    @Option(help: "The Python interpreter with aioapns installed.") var python = "python3"
    @Option(help: "The aioapns benchmark script.") var aioapnsScript = "benchmarks/aioapns_bench.py"
    @Option(help: "Notifications of the aioapns reference run (default 20,000; 5,000 with --quick).") var aioapnsCount: Int?
    @Option(help: "The chart script (matplotlib).") var plotScript = "benchmarks/plot_capacity.py"
    @Option(help: "Results name (default capacity; capacity-quick with --quick; capacity-cluster with --redis cluster).") var name: String?
    @Option(name: .customLong("redis"), help: "single (one redis-server) or cluster (a Redis Cluster of 3 masters).") var redisBackend = "single"
    @Option(help: "Registration batches of 100,000 devices in flight at once.") var registrationConcurrency = 4
    @Option(
        help:
            "Fail (after writing the results) when a campaign's Redis commands per notification, scripts' calls included, exceed this: a count that does not depend on the machine's speed (the CI gate on the send path's Redis cost)."
    )
    var maxRedisCommandsPerNotification: Double?
    @Option(
        help:
            "worker.settle-patience-ms of the workers (default: the workers' default, 30). A patience longer than a chunk's batch takes to fill makes every batch full, so the Redis commands per notification no longer depend on the machine's speed (the CI gate)."
    )
    var settlePatienceMs: Int?
    @Flag(
        help:
            "Campaigns with a badge the server keeps (aps.badge {\"increment\": 1}: each device's number counted in Redis and carried by its notification) instead of the number 1."
    )
    var keptBadge = false
    @OptionGroup var results: ResultOptions

    private var deviceCount: Int { devices ?? (quick ? 100_000 : 1_000_000) }

    func run() async throws {
        var logger = Logger(label: "pushfleet.bench")
        logger.logLevel = .error
        let workerCounts = workers.split(separator: ",").compactMap { Int($0) }
        let devices = deviceCount
        guard redisBackend == "single" || redisBackend == "cluster" else { throw ValidationError("--redis is single or cluster") }
        var options = EmbeddedStack.Options()
        if redisBackend == "cluster" {
            options.redisClusterMasters = 3
            options.redisReplicas = 0
        }
        options.deliveryPartitions = deliveryPartitions ?? Self.deliveryPartitions(devices: devices)
        options.registryShards = registryShards ?? Self.compactShards(devices: devices)
        options.jobPartitions = 16
        options.simulatorThreads = 1
        options.workerSettings = ["chunks-in-flight: 4", "notifications-in-flight: 2000"]
        let latency = try simulatorLatency()
        let stack = try await EmbeddedStack.start(options, logger: logger) {
            $0.tracksDuplicates = false
            $0.latency = latency
        }
        defer { try? FileManager.default.removeItem(at: stack.directory) }

        let redis = stack.makeRedisClient(logger: logger)
        let registry = stack.makeRegistry(redis)
        print("registering \(devices) devices")
        let memoryBefore = try await ResourceUsage.redisInfo(redis, section: "memory")["used_memory"] ?? 0
        let registerStart = ContinuousClock.now
        // Seconds per 1,000,000 devices as the registry grows: whether registration stays linear.
        // Batches of 100,000 go in order, a few at once (the client encodes while Redis writes).
        var millionStart = registerStart
        var secondsPerMillion: [Double] = []
        try await withThrowingTaskGroup(of: Int.self) { group in
            var registered = 0
            var inFlight = 0
            func finishOne() async throws {
                guard let count = try await group.next() else { return }
                inFlight -= 1
                let before = registered
                registered += count
                if registered / 1_000_000 > before / 1_000_000 {
                    secondsPerMillion.append((ContinuousClock.now - millionStart).seconds)
                    millionStart = .now
                    print("registered \(registered) devices, the last million in \(String(format: "%.1f", secondsPerMillion.last!)) s")
                }
            }
            for start in stride(from: 0, to: devices, by: 100_000) {
                if inFlight == max(registrationConcurrency, 1) {
                    try await finishOne()
                }
                let end = min(start + 100_000, devices)
                group.addTask {
                    let batch = (start..<end).map {
                        DeviceRegistration(token: Self.token($0), environment: .sandbox, openID: nil, tags: [], registeredAt: nil)
                    }
                    try await registry.bind(batch, app: EmbeddedStack.app)
                    return batch.count
                }
                inFlight += 1
            }
            while inFlight > 0 {
                try await finishOne()
            }
        }
        let registerSeconds = (ContinuousClock.now - registerStart).seconds
        let memoryAfter = try await ResourceUsage.redisInfo(redis, section: "memory")["used_memory"] ?? 0
        let bytesPerDevice = (memoryAfter - memoryBefore) / Double(devices)
        print("registered in \(String(format: "%.1f", registerSeconds)) s, Redis memory \(String(format: "%.1f", bytesPerDevice)) bytes per device")

        let producer = try KafkaProducer(
            configuration: KafkaProducerConfiguration(bootstrapServers: stack.kafka.bootstrapServers), logger: logger)
        var runs: [PipelineRun] = []
        for count in workerCounts {
            runs.append(try await runCampaign(workers: count, stack: stack, producer: producer, redis: redis))
        }
        await producer.close()

        let (reference, peer) = try await references(stack: stack)
        await redis.shutdown()
        await stack.stop()

        let report = PipelineBenchmarkReport(
            devices: devices, redis: redisBackend == "cluster" ? "a Redis Cluster of 3 masters" : "one redis-server",
            connectionsPerPool: connections, streamsPerConnection: streams, settlePatienceMilliseconds: settlePatienceMs,
            simulatorLatency: latencyMs, registrationSeconds: registerSeconds, registrationSecondsPerMillion: secondsPerMillion,
            registryShards: options.registryShards,
            redisMemoryBytesPerDevice: bytesPerDevice, runs: runs, h2load: reference, aioapns: peer)
        let resultName = name ?? (quick ? "capacity-quick" : redisBackend == "cluster" ? "capacity-cluster" : "capacity")
        try results.write(name: resultName, result: report, markdown: report.markdown(chart: "\(resultName).png"))
        try results.plot(name: resultName, python: python, script: plotScript)
        if let limit = maxRedisCommandsPerNotification {
            for run in runs {
                guard let commands = run.redisCommandsPerNotification, commands <= limit else {
                    throw BenchmarkError.failed(
                        "\(run.workers) worker(s): \(run.redisCommandsPerNotification.map { String(format: "%.3f", $0) } ?? "no") Redis commands per notification, more than \(limit)"
                    )
                }
            }
            print("Redis commands per notification within \(limit)")
        }
    }

    private func simulatorLatency() throws -> APNsSimulatorLatency {
        if latencyMs == "0" { return .none }
        let bounds = latencyMs.split(separator: "-").compactMap { Int($0) }
        guard bounds.count == 2, bounds[0] >= 0, bounds[1] >= bounds[0] else {
            throw ValidationError("--latency-ms is LOW-HIGH in milliseconds, e.g. 2-10, or 0")
        }
        return .uniform(.milliseconds(bounds[0]), .milliseconds(bounds[1]))
    }

    static func token(_ n: Int) -> DeviceToken {
        try! DeviceToken(hex: String(repeating: "5e", count: 24) + String(format: "%016x", n))
    }

    private func runCampaign(workers: Int, stack: EmbeddedStack, producer: KafkaProducer, redis: any RedisCommands) async throws -> PipelineRun {
        print("campaign with \(workers) worker process(es)")
        var environment = [
            "PUSHFLEET__APNS__CONNECTIONS_PER_POOL": String(connections),
            "PUSHFLEET__APNS__STREAMS_PER_CONNECTION": String(streams),
        ]
        if let settlePatienceMs { environment["PUSHFLEET__WORKER__SETTLE_PATIENCE_MS"] = String(settlePatienceMs) }
        // Killed when it goes out of scope, unless stopped below.
        let fleet = WorkerFleet(binary: pushfleet, stack: stack, logLevel: workerLogLevel, environment: environment)
        try fleet.start(workers)
        let processes = fleet.runningIdentifiers
        // Every worker holds its share of each group's partitions before anything is published:
        // a worker still joining when the broadcast goes out moves partitions in the middle of
        // it (a CI run of two workers waited 10.5 s for its expansion that way, 2026-11-29).
        try await fleet.awaitSettled(CampaignHarness.groupPartitions(stack))
        // Warm up: a one-token job proves the workers connected to APNs.
        let warmUp = "warm-up-\(workers)"
        try await publish(
            PushJob(
                id: warmUp, app: EmbeddedStack.app, environment: .sandbox, audience: .tokens([Self.token(0)]),
                notification: APNsPayload(["aps": ["alert": "warm-up"]]), headers: PushHeaders(pushType: .alert)), producer: producer)
        let jobs = JobStore(client: redis)
        while (try await jobs.statistics(jobID: warmUp)["accepted"] ?? 0) < 1 {
            try await Task.sleep(for: .milliseconds(100))
        }
        try await stack.simulator.reset()
        let cpuBefore = processes.map { ResourceUsage.cpuSeconds(ofProcess: $0) }
        let benchCPUBefore = ResourceUsage.selfCPUSeconds()
        let redisBefore = try await Self.redisFigures(redis)

        let jobID = "broadcast-\(workers)"
        let start = ContinuousClock.now
        try await publish(
            PushJob(
                id: jobID, app: EmbeddedStack.app, environment: .sandbox, audience: .broadcast,
                notification: APNsPayload([
                    "aps": [
                        "alert": ["title": "Benchmark", "body": .string(String(repeating: "x", count: 100))],
                        "badge": keptBadge ? JSONValue.object(["increment": 1]) : 1,
                    ]
                ]),
                headers: PushHeaders(pushType: .alert)),
            producer: producer)
        var samples: [PipelineRun.Sample] = []
        var rssAtTenth: [Int] = []
        // Job publish → acceptance of each notification, at the sampling resolution (250 ms).
        var latency = Histogram<UInt64>(highestTrackableValue: 3_600_000, numberOfSignificantValueDigits: .three)
        var accepted = 0
        let devices = deviceCount
        var lastProgress = ContinuousClock.now
        var lastAccepted = 0
        var expandedAfter: Double?
        while accepted < devices {
            try await Task.sleep(for: .milliseconds(250))
            let previous = accepted
            accepted = try await stack.simulator.counters().accepted
            let elapsed = (ContinuousClock.now - start).seconds
            if expandedAfter == nil, try await jobs.expandedTokens(jobID: jobID) >= devices {
                expandedAfter = elapsed
            }
            if accepted > previous {
                latency.record(UInt64((elapsed * 1000).rounded()), count: UInt64(accepted - previous))
            }
            let rss = processes.map { ResourceUsage.memoryKilobytes($0, field: "VmRSS") }
            samples.append(PipelineRun.Sample(seconds: elapsed, accepted: accepted, workerRSSMegabytes: rss.map { Double($0) / 1024 }))
            if rssAtTenth.isEmpty && accepted >= devices / 10 { rssAtTenth = rss }
            if accepted > lastAccepted {
                lastAccepted = accepted
                lastProgress = .now
            } else if ContinuousClock.now - lastProgress > .seconds(60) {
                throw BenchmarkError.failed("no progress for 60 s at \(accepted) of \(devices)")
            }
        }
        let seconds = (ContinuousClock.now - start).seconds
        let workerCPU = zip(processes, cpuBefore).map { ResourceUsage.cpuSeconds(ofProcess: $0) - $1 }
        let benchCPU = ResourceUsage.selfCPUSeconds() - benchCPUBefore
        let redisAfter = try await Self.redisFigures(redis)
        func redisPerNotification(_ field: String) -> Double {
            ((redisAfter[field] ?? 0) - (redisBefore[field] ?? 0)) / Double(max(accepted, 1))
        }
        let rssAtEnd = processes.map { ResourceUsage.memoryKilobytes($0, field: "VmRSS") }
        let peak = processes.map { ResourceUsage.memoryKilobytes($0, field: "VmHWM") }
        let counters = try await stack.simulator.counters()
        let statistics = try await jobs.statistics(jobID: jobID)
        fleet.stopAll()
        let exitStatuses = fleet.ended.map(\.status)
        let run = PipelineRun(
            workers: workers, notifications: accepted, seconds: seconds, notificationsPerSecond: Double(accepted) / seconds,
            expandedAfterSeconds: expandedAfter,
            workerCPUSecondsPer100k: workerCPU.reduce(0, +) / Double(accepted) * 100_000,
            benchProcessCPUSecondsPer100k: benchCPU / Double(accepted) * 100_000,
            workerRSSAtTenthMegabytes: rssAtTenth.map { Double($0) / 1024 },
            workerRSSAtEndMegabytes: rssAtEnd.map { Double($0) / 1024 },
            workerPeakRSSMegabytes: peak.map { Double($0) / 1024 },
            simulatorRequests: counters.requests, jobAccepted: statistics["accepted"] ?? 0, workerExitStatuses: exitStatuses,
            redisCommandsPerNotification: redisPerNotification("total_commands_processed"),
            redisBytesInPerNotification: redisPerNotification("total_net_input_bytes"),
            redisBytesOutPerNotification: redisPerNotification("total_net_output_bytes"),
            redisCPUSecondsPer100k: (redisPerNotification("used_cpu_user") + redisPerNotification("used_cpu_sys")) * 100_000,
            redisCommandsPer1000Notifications: Dictionary(
                uniqueKeysWithValues: redisAfter.keys.filter { $0.hasPrefix("command ") }.map {
                    (String($0.dropFirst("command ".count)), redisPerNotification($0) * 1000)
                }.filter { $0.1 > 0 }),
            latencyP50Milliseconds: Double(latency.valueAtPercentile(50)), latencyP99Milliseconds: Double(latency.valueAtPercentile(99)),
            latencyMaxMilliseconds: Double(latency.max),
            latencyPercentiles: stride(from: 0.0, through: 100.0, by: 2.5).map { [$0, Double(latency.valueAtPercentile($0))] },
            samples: samples)
        print(run.line)
        return run
    }

    /// Partitions of `push.deliveries` that hold what the expansion publishes ahead of the
    /// sending: the mock cluster keeps the newest 5 MB of a partition (about 68 chunks of 1,000
    /// notifications) and drops older ones unread, and a broadcast's expansion runs ahead by up
    /// to most of its audience (7.7M of 10M in the 10M run). A partition per 50,000 devices
    /// (a power of two, at least 64) keeps 5 MB per 50,000, room for all of it.
    static func deliveryPartitions(devices: Int) -> Int32 {
        var partitions: Int32 = 64
        while Int(partitions) * 50_000 < devices { partitions *= 2 }
        return partitions
    }

    /// The registry shards that keep every bucket hash of `devices` small (schemas/redis.md:
    /// 1,024 buckets per shard, ≤ 64 devices each): a new device's `HSETNX` searches its bucket's
    /// listpack, so buckets that fill to 95 devices made the last 10M of a 100M registration 26%
    /// slower than the first, and buckets of 47 keep it flat (docs/scaling.md).
    static func compactShards(devices: Int) -> Int {
        var shards = 16
        while shards * 65_536 < devices, shards < RegistryLayout.maxShards { shards *= 2 }
        return shards
    }

    /// Redis's counters that the campaign moves: commands, network bytes, CPU (summed over a
    /// cluster's masters).
    private static func redisFigures(_ redis: any RedisCommands) async throws -> [String: Double] {
        var figures = try await ResourceUsage.redisInfo(redis, section: "stats")
        figures.merge(try await ResourceUsage.redisInfo(redis, section: "cpu")) { $1 }
        for (command, calls) in try await ResourceUsage.redisInfo(redis, section: "commandstats") {
            figures["command " + command] = calls
        }
        return figures
    }

    private func publish(_ job: PushJob, producer: KafkaProducer) async throws {
        _ = try await producer.send(KafkaProducerMessage(topic: PushTopic.jobs, key: job.id, value: job.jsonData()))
    }

    private func references(stack: EmbeddedStack) async throws -> (APNsBenchmarkReport.Measurement, APNsBenchmarkReport.Measurement) {
        let keyPEM = try String(contentsOf: stack.directory.appendingPathComponent("\(EmbeddedStack.app).p8"), encoding: .utf8)
        let token = try APNsProviderToken(
            teamID: EmbeddedStack.teamID, keyID: EmbeddedStack.keyID, privateKey: P256.Signing.PrivateKey(pemRepresentation: keyPEM),
            issuedAt: Date())
        let payloadFile = stack.directory.appendingPathComponent("payload.json")
        try Data((#"{"aps":{"alert":{"title":"Benchmark","body":""# + String(repeating: "x", count: 100) + #""},"badge":1}}"#).utf8)
            .write(to: payloadFile)
        let references = ReferenceClients(
            port: stack.simulator.port, directory: stack.directory, authorization: token.value,
            topic: EmbeddedStack.bundleID, deviceToken: Self.token(1).hex, payloadFile: payloadFile, simulatorPID: getpid())
        let binary = h2load
        let count = h2loadCount ?? (quick ? 50_000 : 200_000)
        let connections = self.connections
        let streams = self.streams
        print("references: h2load (\(count)) and aioapns (\(aioapnsCount ?? (quick ? 5_000 : 20_000))) against the same simulator")
        let limit = try await Task.detached {
            try references.h2load(binary: binary, connections: connections, streamsPerConnection: streams, count: count)
        }.value
        let python = self.python
        let script = aioapnsScript
        let peerCount = aioapnsCount ?? (quick ? 5_000 : 20_000)
        let keyPath = stack.directory.appendingPathComponent("\(EmbeddedStack.app).p8").path
        let payload = try String(contentsOf: payloadFile, encoding: .utf8)
        let peer = try await Task.detached {
            try references.aioapns(
                python: python, script: script, keyPath: keyPath, keyID: EmbeddedStack.keyID, teamID: EmbeddedStack.teamID,
                payload: payload, connections: connections, streamsPerConnection: streams, count: peerCount)
        }.value
        return (limit, peer)
    }
}

struct PipelineRun: Codable {
    struct Sample: Codable {
        var seconds: Double
        var accepted: Int
        var workerRSSMegabytes: [Double]
    }

    var workers: Int
    var notifications: Int
    var seconds: Double
    var notificationsPerSecond: Double
    /// When the expand stage had published every token (chunks on push.deliveries), from the
    /// job's publication; `nil` when the campaign ended first (to the sampling resolution).
    var expandedAfterSeconds: Double?
    var workerCPUSecondsPer100k: Double
    var benchProcessCPUSecondsPer100k: Double
    var workerRSSAtTenthMegabytes: [Double]
    var workerRSSAtEndMegabytes: [Double]
    var workerPeakRSSMegabytes: [Double]
    var simulatorRequests: Int
    var jobAccepted: Int
    var workerExitStatuses: [Int32]
    /// Redis commands, network bytes and CPU seconds (per 100,000) the campaign cost per
    /// notification, all of the fleet's state included (every master of a cluster).
    var redisCommandsPerNotification: Double?
    var redisBytesInPerNotification: Double?
    var redisBytesOutPerNotification: Double?
    var redisCPUSecondsPer100k: Double?
    /// Redis commands per 1,000 notifications, by command (`INFO commandstats`).
    var redisCommandsPer1000Notifications: [String: Double]?
    /// Job publish → acceptance of every notification of the broadcast (ms, 250 ms resolution).
    var latencyP50Milliseconds: Double
    var latencyP99Milliseconds: Double
    var latencyMaxMilliseconds: Double
    /// [percentile, ms] pairs every 2.5 percentiles, for the chart.
    var latencyPercentiles: [[Double]]
    var samples: [Sample]

    /// The rate at the plateau (the mean rate from the end of the ramp to 90% of the campaign's
    /// time), and the first sample's time at which the rate reached 90% of it.
    var plateau: (rate: Double, reachedAfterSeconds: Double)? {
        guard samples.count >= 4 else { return nil }
        return Self.plateau(of: samples.map { ($0.seconds, $0.accepted) }, campaignSeconds: seconds)
    }

    /// The plateau of a campaign sampled as (seconds since publication, accepted so far): the
    /// mean rate of its steady part, and the first time the rate reached 90% of it.
    ///
    /// The steady part runs from the end of the ramp to 90% of `campaignSeconds` (what comes
    /// after is the tail: the last chunks settling). The ramp ends at the first sample that
    /// closes an interval at half the campaign's highest interval rate or more, and not before
    /// 10% of `campaignSeconds`. At Apple's distance the ramp is a connection's handshakes
    /// (about 1 s at 80 ms), a third of a CI-sized campaign: a window starting at a fixed 10%
    /// read part of it as the plateau. The mean over the window, not the median of its
    /// quarter-second rates: those alternate with the waves of chunks settling (84,000 next to
    /// 150,000/s at 80 ms), and the median of ten of them is a draw.
    static func plateau(
        of samples: [(seconds: Double, accepted: Int)], campaignSeconds: Double
    ) -> (rate: Double, reachedAfterSeconds: Double)? {
        var rates: [(seconds: Double, accepted: Int, rate: Double)] = []
        var previous = (seconds: 0.0, accepted: 0)
        for sample in samples {
            let interval = sample.seconds - previous.seconds
            if interval > 0 {
                rates.append((sample.seconds, sample.accepted, Double(sample.accepted - previous.accepted) / interval))
            }
            previous = sample
        }
        guard let highest = rates.map(\.rate).max(), highest > 0,
            let start = rates.first(where: { $0.rate >= highest / 2 && $0.seconds >= campaignSeconds * 0.1 }),
            let end = rates.last(where: { $0.seconds <= campaignSeconds * 0.9 }), end.seconds > start.seconds
        else { return nil }
        let rate = Double(end.accepted - start.accepted) / (end.seconds - start.seconds)
        guard let reached = rates.first(where: { $0.rate >= 0.9 * rate }) else { return nil }
        return (rate, reached.seconds)
    }

    var line: String {
        String(
            format: "%d worker(s): %d notifications in %.1f s = %.0f/s; worker CPU %.2f s/100k; RSS at 10%% %@ MB, at end %@ MB, peak %@ MB",
            workers, notifications, seconds, notificationsPerSecond, workerCPUSecondsPer100k,
            workerRSSAtTenthMegabytes.map { String(format: "%.0f", $0) }.joined(separator: "/"),
            workerRSSAtEndMegabytes.map { String(format: "%.0f", $0) }.joined(separator: "/"),
            workerPeakRSSMegabytes.map { String(format: "%.0f", $0) }.joined(separator: "/"))
    }
}

struct PipelineBenchmarkReport: Codable {
    var devices: Int
    /// Where the fleet's state lives: one redis-server or a Redis Cluster.
    var redis: String?
    var connectionsPerPool: Int
    var streamsPerConnection: Int
    /// The workers' `worker.settle-patience-ms` when the run set it (absent: their default).
    var settlePatienceMilliseconds: Int?
    var simulatorLatency: String
    var registrationSeconds: Double
    /// Seconds for each successive 1,000,000 devices registered (absent in older results).
    var registrationSecondsPerMillion: [Double]?
    /// The app's registry shards.
    var registryShards: Int?
    /// Redis's `used_memory` growth over the registration, per device (absent in older results).
    var redisMemoryBytesPerDevice: Double?
    var runs: [PipelineRun]
    var h2load: APNsBenchmarkReport.Measurement
    var aioapns: APNsBenchmarkReport.Measurement

    /// ": the first million in 4.9 s, the last in 9.8 s", for two millions or more.
    private var registrationCurve: String {
        guard let perMillion = registrationSecondsPerMillion, perMillion.count >= 2,
            let first = perMillion.first, let last = perMillion.last
        else { return "" }
        return String(format: ": the first million in %.1f s, the last in %.1f s", first, last)
    }

    func markdown(chart: String) -> String {
        let memory = redisMemoryBytesPerDevice.map { String(format: "; Redis memory %.1f bytes per device", $0) } ?? ""
        var lines = [
            "Broadcast to \(devices) registered devices in \(registryShards ?? 16) registry shards (registered in \(String(format: "%.1f", registrationSeconds)) s\(registrationCurve)), job publish → acceptance by the simulator (answer time uniform \(simulatorLatency) ms). State on \(redis ?? "one redis-server"). Embedded Kafka and the simulator run in the benchmark process; workers are `pushfleet worker` processes (expand, send, feedback), each with \(connectionsPerPool) APNs connections × \(streamsPerConnection) streams\(settlePatienceMilliseconds.map { ", settle patience \($0) ms" } ?? ""). Latency is per notification, from the job's publication to its acceptance, at 250 ms resolution (a broadcast's notifications wait their turn: p50 is when half the audience had it).",
            "",
            "![throughput over time and latency distribution](\(chart))",
            "",
            "| workers | seconds | notifications/s | vs h2load | latency p50 / p99 / max (s) | worker CPU s / 100k | worker RSS at 10% (MB) | at end (MB) | peak (MB) | exit |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for run in runs {
            func megabytes(_ values: [Double]) -> String { values.map { String(format: "%.0f", $0) }.joined(separator: " / ") }
            lines.append(
                "| \(run.workers) | \(String(format: "%.1f", run.seconds)) | \(String(format: "%.0f", run.notificationsPerSecond)) | \(String(format: "%.0f%%", run.notificationsPerSecond / h2load.notificationsPerSecond * 100)) | \(String(format: "%.1f / %.1f / %.1f", run.latencyP50Milliseconds / 1000, run.latencyP99Milliseconds / 1000, run.latencyMaxMilliseconds / 1000)) | \(String(format: "%.2f", run.workerCPUSecondsPer100k)) | \(megabytes(run.workerRSSAtTenthMegabytes)) | \(megabytes(run.workerRSSAtEndMegabytes)) | \(megabytes(run.workerPeakRSSMegabytes)) | \(run.workerExitStatuses.map(String.init).joined(separator: ",")) |"
            )
        }
        lines += [
            "",
            "| workers | plateau (notifications/s) | plateau reached after (s) | expanded after (s) | benchmark process CPU s / 100k (simulator, Kafka) | Redis commands / notification | Redis bytes in / out per notification | Redis CPU s / 100k |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for run in runs {
            func figure(_ value: Double?, _ format: String) -> String { value.map { String(format: format, $0) } ?? "–" }
            let plateau = run.plateau
            lines.append(
                "| \(run.workers) | \(figure(plateau?.rate, "%.0f")) | \(figure(plateau?.reachedAfterSeconds, "%.2f")) | \(figure(run.expandedAfterSeconds, "%.2f")) | \(figure(run.benchProcessCPUSecondsPer100k, "%.2f")) | \(figure(run.redisCommandsPerNotification, "%.3f")) | \(figure(run.redisBytesInPerNotification, "%.1f")) / \(figure(run.redisBytesOutPerNotification, "%.1f")) | \(figure(run.redisCPUSecondsPer100k, "%.2f")) |"
            )
        }
        for run in runs {
            guard let commands = run.redisCommandsPer1000Notifications, !commands.isEmpty else { continue }
            let listed = commands.sorted { $0.value > $1.value }.prefix(12).map { "\($0.key) \(String(format: "%.1f", $0.value))" }
            lines += ["", "Redis commands per 1,000 notifications, \(run.workers) worker(s): " + listed.joined(separator: ", ") + "."]
        }
        lines += [
            "",
            "References in the same run, against the same simulator after the campaigns, \(connectionsPerPool) connections × \(streamsPerConnection) streams: h2load \(h2load.notifications) requests: \(String(format: "%.0f", h2load.notificationsPerSecond))/s (the machine's HTTP/2 limit with this simulator); aioapns (Python peer client) \(aioapns.notifications) requests: \(String(format: "%.0f", aioapns.notificationsPerSecond))/s.",
        ]
        return lines.joined(separator: "\n")
    }
}
