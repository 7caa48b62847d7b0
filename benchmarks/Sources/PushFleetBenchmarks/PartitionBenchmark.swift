import APNsCore
import APNsSimulator
import ArgumentParser
import Crypto
import EmbeddedKafka
import EmbeddedStack
import Foundation
import Kafka
import LocalRedis
import Logging
import NIOHTTP1
import PushCore
import PushStore
import Redis
import Spawn

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The partition suite: the fault suite's campaign and counts, on test hosts of our own
/// (``TestNetwork``) with links between them cut. Three worker hosts (each with a `pushfleet
/// worker` and a `pushfleet api`), a Redis Cluster of three masters and three replicas on six
/// hosts, a Tansu broker and `apns-sim` on a host each. Beside each campaign, binds and unbinds
/// through the three APIs (``RegistryWriteLoad``) count the acknowledged registry writes lost.
struct PartitionBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "partitions",
        abstract: "Broadcasts while links between test hosts (network namespaces) are cut, with counts; needs root.")

    @Flag(help: "Quick mode for CI: 20,000 devices at 2,000/s, 8 s cuts, results named partitions-quick.")
    var quick = false
    @Option(help: "Registered devices; the broadcast goes to all of them (default 200,000; 20,000 with --quick).") var devices: Int?
    @Option(help: "The campaign's rate, notifications per second (default 5,000; 2,000 with --quick).") var rate: Double?
    @Option(help: "Scenarios to run, comma separated (default all; baseline always runs first).") var scenarios: String?
    @Option(help: "The pushfleet binary (build it in release mode).") var pushfleet = ".build/release/pushfleet"
    @Option(help: "The apns-sim binary.") var apnsSim = ".build/release/apns-sim"
    @Option(help: "Log level of the worker and API processes (their standard error).") var workerLogLevel = "error"
    @Option(help: "The chart script (matplotlib).") var plotScript = "benchmarks/plot_faults.py"
    @Option(help: "The Python interpreter with matplotlib.") var python = "python3"
    @OptionGroup var results: ResultOptions

    func run() async throws {
        guard getuid() == 0 else { throw ValidationError("the partition suite makes network namespaces: run it as root") }
        let selected = try selectedScenarios()
        let plan = PartitionPlan(quick: quick, devices: devices ?? (quick ? 20_000 : 200_000), rate: rate ?? (quick ? 2_000 : 5_000))
        var logger = Logger(label: "pushfleet.bench.partitions")
        logger.logLevel = .error
        var outcomes: [FaultOutcome] = []
        var baselineRate: Double?
        for scenario in selected {
            print("scenario \(scenario.rawValue): \(scenario.summary(plan))")
            var outcome = try await PartitionRun(
                scenario: scenario, plan: plan, pushfleet: pushfleet, apnsSim: apnsSim, logLevel: workerLogLevel, logger: logger
            ).run()
            if scenario == .baseline { baselineRate = outcome.notificationsPerSecond }
            outcome.judge(baselineRate: baselineRate ?? plan.rate, judgesThroughput: false)
            print(outcome.line + (outcome.registryWrites.map { ", registry writes \($0.acknowledged) acknowledged, \($0.lost) lost" } ?? ""))
            outcomes.append(outcome)
        }
        let report = PartitionReport(devices: plan.devices, rate: plan.rate, quick: quick, outage: plan.outage.seconds, scenarios: outcomes)
        let name = quick ? "partitions-quick" : "partitions"
        try results.write(name: name, result: report, markdown: report.markdown(chart: "\(name).png"))
        try results.plot(name: name, python: python, script: plotScript)
        try FaultOutcome.requireExpectationsMet(outcomes)
    }

    private func selectedScenarios() throws -> [PartitionScenario] {
        guard let scenarios else { return PartitionScenario.allCases }
        return try PartitionScenario.parse(scenarios, baseline: .baseline)
    }
}

/// Sizes and timings shared by every scenario of a run.
struct PartitionPlan {
    var quick: Bool
    var devices: Int
    var rate: Double
    let workers = 3
    let notificationsInFlight = 2_000
    let jobPartitions = 8
    let deliveryPartitions = 32

    var campaignSeconds: Double { Double(devices) / rate }
    /// When the cut comes: a quarter into the campaign.
    var faultStart: Duration { .milliseconds(Int(campaignSeconds * 250)) }
    /// How long a cut lasts: long against the Redis Cluster's node timeout (2 s) and the Kafka
    /// session timeout (6 s), so that failovers and rebalances happen during it.
    var outage: Duration { quick ? .seconds(8) : .seconds(30) }
    /// How long the link flaps (down 2 s, up 2 s).
    var flapping: Duration { quick ? .seconds(12) : .seconds(60) }
}

enum PartitionScenario: String, CaseIterable, Codable {
    case baseline
    case workerCutFromRedis = "worker-cut-from-redis"
    case workerCutFromKafka = "worker-cut-from-kafka"
    case workerCutFromAPNs = "worker-cut-from-apns"
    case redisMasterMinority = "redis-master-minority"
    case zoneDown = "zone-down"
    case flappingLink = "flapping-link"

    /// Whether the cut can move every worker's partitions, not only the cut-off worker's: where a
    /// Redis master fails over with a worker cut off, the Kafka group coordinator answered none
    /// of the three workers' heartbeats for 6 s and every assignment moved (docs/faults.md,
    /// "Partitions"), so what can be sent twice is every worker's window.
    var movesEveryAssignment: Bool { self == .redisMasterMinority || self == .zoneDown }

    func summary(_ plan: PartitionPlan) -> String {
        switch self {
        case .baseline: "no cut, \(plan.workers) workers on hosts of their own"
        case .workerCutFromRedis: "worker-1 cut from every Redis node for \(plan.outage) (it still reaches Kafka and APNs)"
        case .workerCutFromKafka: "worker-1 cut from the Kafka broker for \(plan.outage)"
        case .workerCutFromAPNs: "worker-1 cut from APNs for \(plan.outage)"
        case .redisMasterMinority:
            "a Redis master and worker-1 cut from everything else for \(plan.outage) (failover on the majority side), then healed"
        case .zoneDown: "a zone (worker-1, a master, another master's replica) cut from everything for \(plan.outage)"
        case .flappingLink: "worker-1's link down 2 s, up 2 s, for \(plan.flapping)"
        }
    }
}

/// The hosts of one scenario and the processes on them, started and stopped together.
final class PartitionStack: Sendable {
    static let redisHosts = (1...6).map { "redis-\($0)" }
    static let workerHosts = (1...3).map { "worker-\($0)" }
    static let apiPort = 8080
    static let simulatorPort = 2197
    static let simulatorControlPort = 2198

    let network: TestNetwork
    let directory: URL
    let broker: TansuBroker
    let cluster: LocalRedisCluster
    let simulator: ChildProcess
    let apis: [ChildProcess]
    let configurationPath: String
    let writeKey: String

    private init(
        network: TestNetwork, directory: URL, broker: TansuBroker, cluster: LocalRedisCluster, simulator: ChildProcess, apis: [ChildProcess],
        configurationPath: String, writeKey: String
    ) {
        self.network = network
        self.directory = directory
        self.broker = broker
        self.cluster = cluster
        self.simulator = simulator
        self.apis = apis
        self.configurationPath = configurationPath
        self.writeKey = writeKey
    }

    var simulatorControl: RemoteSimulator {
        RemoteSimulator(base: URL(string: "http://\(network.host("apns").address):\(Self.simulatorControlPort)")!)
    }

    var apiURLs: [URL] {
        Self.workerHosts.map { URL(string: "http://\(network.host($0).address):\(Self.apiPort)")! }
    }

    /// The test host a Redis node runs on.
    func host(of node: RedisClusterTopology.Address) -> String {
        guard let host = network.hosts.first(where: { $0.address == node.host }) else { preconditionFailure("no host has \(node)") }
        return host.name
    }

    static func start(plan: PartitionPlan, pushfleet: String, apnsSim: String, logLevel: String, logger: Logger) async throws -> PartitionStack {
        let network = try TestNetwork.create(["kafka", "apns"] + redisHosts + workerHosts)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-partitions-\(UUID().uuidString)")
        var started: [ChildProcess] = []
        var broker: TansuBroker?
        var cluster: LocalRedisCluster?
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let key = P256.Signing.PrivateKey()
            let keyFile = directory.appendingPathComponent("\(EmbeddedStack.app).p8")
            try key.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)

            let apns = network.host("apns")
            let portsFile = directory.appendingPathComponent("apns-ports.json")
            let simulator = try launch(
                apnsSim, on: apns,
                arguments: [
                    "--host", apns.address, "--port", String(simulatorPort), "--control-port", String(simulatorControlPort),
                    "--ports-out", portsFile.path, "--ca-out", directory.appendingPathComponent("ca.pem").path,
                    "--key", "\(EmbeddedStack.keyID):\(EmbeddedStack.teamID):\(keyFile.path)", "--bundle-id", EmbeddedStack.bundleID,
                    "--bundle-id", EmbeddedStack.otherBundleID, "--threads", "1", "--latency-ms", "6", "--latency-jitter-ms", "4",
                ],
                log: directory.appendingPathComponent("apns-sim.log"))
            started.append(simulator)
            try await waitUntil("apns-sim listens", process: simulator) { FileManager.default.fileExists(atPath: portsFile.path) }

            let kafka = network.host("kafka")
            let tansu = try await TansuBroker.start(host: kafka.address, launcher: kafka.launcher, logger: logger)
            broker = tansu
            for (topic, partitions) in [
                (PushTopic.jobs, Int32(plan.jobPartitions)), (PushTopic.deliveries, Int32(plan.deliveryPartitions)),
                (PushTopic.feedback, Int32(EmbeddedStack.feedbackPartitions)), (PushTopic.deadLetters, 1),
                (PushTopic.online, 1),
            ] {
                try await tansu.createTopic(topic, partitions: partitions)
            }

            let redis = try await LocalRedisCluster.start(
                masters: 3, replicasPerMaster: 1,
                placements: redisHosts.map { LocalRedisCluster.Placement(host: network.host($0).address, launcher: network.host($0).launcher) },
                // Reached from other hosts without a password: the test hosts live in this
                // machine's namespaces only.
                extraArguments: ["--protected-mode", "no"])
            cluster = redis

            let campaignKey = EmbeddedStack.generateAPIKey()
            let writeKey = EmbeddedStack.generateAPIKey()
            let configurationPath = directory.appendingPathComponent("pushfleet.yaml").path
            try configuration(
                kafka: tansu.bootstrapServers, redis: redis.seeds, apns: apns.address, plan: plan, campaignKey: campaignKey.digest,
                writeKey: writeKey.digest
            ).write(toFile: configurationPath, atomically: true, encoding: .utf8)

            var apis: [ChildProcess] = []
            for name in workerHosts {
                let api = try launch(
                    pushfleet, on: network.host(name),
                    arguments: ["api", "--config", configurationPath, "--log-level", logLevel],
                    log: directory.appendingPathComponent("api-\(name).log"))
                started.append(api)
                apis.append(api)
            }
            for (api, name) in zip(apis, workerHosts) {
                let health = URL(string: "http://\(network.host(name).address):\(apiPort)/healthz")!
                try await waitUntil("pushfleet api on \(name) answers", process: api) {
                    (try? await BenchmarkHTTP.get(health)) != nil
                }
            }
            return PartitionStack(
                network: network, directory: directory, broker: tansu, cluster: redis, simulator: simulator, apis: apis,
                configurationPath: configurationPath, writeKey: writeKey.key)
        } catch {
            for process in started { stop(process) }
            await broker?.stop()
            await cluster?.stop()
            network.destroy()
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// The workers, one per worker host.
    func fleet(pushfleet: String, logLevel: String) -> WorkerFleet {
        WorkerFleet(
            binary: pushfleet,
            arguments: [
                "worker", "--config", configurationPath, "--role", "expand", "--role", "send", "--role", "feedback", "--log-level", logLevel,
            ],
            environment: ["PUSHFLEET__APNS__STREAMS_PER_CONNECTION": "100"],
            placements: Self.workerHosts.map { WorkerFleet.Placement(launcher: network.host($0).launcher, address: network.host($0).address) })
    }

    func stop() async {
        try? network.healAll()
        for process in apis + [simulator] { Self.stop(process) }
        await broker.stop()
        await cluster.stop()
        network.destroy()
        try? FileManager.default.removeItem(at: directory)
    }

    private static func stop(_ process: ChildProcess) {
        process.signal(SIGKILL)
        process.waitUntilExit()
    }

    /// Runs `binary` on `host`, its output to `log`.
    private static func launch(_ binary: String, on host: TestNetwork.Host, arguments: [String], log: URL) throws -> ChildProcess {
        let file = try OutputFile(path: log.path)
        defer { file.close() }
        return try ChildProcess(
            executable: host.launcher[0], arguments: Array(host.launcher.dropFirst()) + [binary] + arguments,
            output: .descriptor(file.descriptor))
    }

    private static func waitUntil(_ what: String, process: ChildProcess, _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !(await condition()) {
            if let termination = process.termination {
                throw BenchmarkError.failed("\(what): the process exited (\(termination))")
            }
            guard ContinuousClock.now < deadline else { throw BenchmarkError.failed("\(what): not within 30 s") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// The configuration every worker and API process reads.
    private static func configuration(
        kafka: String, redis: [RedisClusterTopology.Address], apns: String, plan: PartitionPlan, campaignKey: String, writeKey: String
    ) -> String {
        """
        # Written by the partition suite: hosts of their own on 10.213.0.0/24.
        kafka:
          bootstrap-servers: "\(kafka)"
          group-prefix: pushfleet
          topics:
            partitions: {jobs: \(plan.jobPartitions), deliveries: \(plan.deliveryPartitions), feedback: \(EmbeddedStack.feedbackPartitions), dead-letters: 1, online: 1}
        redis:
          cluster-nodes: [\(redis.map { "\"\($0)\"" }.joined(separator: ", "))]
          pool-size: 8
        apns:
          endpoint: {host: \(apns), port: \(simulatorPort)}
          ca-file: ca.pem
          connections-per-pool: 2
        registry:
          shards: 16
        worker:
          chunks-in-flight: 4
          notifications-in-flight: \(plan.notificationsInFlight)
        resend:
          base-delay-ms: 20
          max-delay-ms: 500
        api:
          host: 0.0.0.0
          port: \(apiPort)
        apps:
          \(EmbeddedStack.app):
            bundle-id: \(EmbeddedStack.bundleID)
            environments: [sandbox]
            auth:
              token: {team-id: \(EmbeddedStack.teamID), key-id: \(EmbeddedStack.keyID), key-file: \(EmbeddedStack.app).p8}
            api-keys: ["\(campaignKey)"]
          \(EmbeddedStack.otherApp):
            bundle-id: \(EmbeddedStack.otherBundleID)
            environments: [sandbox]
            auth:
              token: {team-id: \(EmbeddedStack.teamID), key-id: \(EmbeddedStack.keyID), key-file: \(EmbeddedStack.app).p8}
            api-keys: ["\(writeKey)"]
        """
    }
}

/// `apns-sim`'s control port, for a campaign's measurement.
struct RemoteSimulator: SimulatorCounting {
    let base: URL

    func acceptedCount() async throws -> Int {
        let body = String(decoding: try await BenchmarkHTTP.get(base.appendingPathComponent("accepted")), as: UTF8.self)
        guard let count = Int(body) else { throw BenchmarkError.failed("apns-sim /accepted: \(body)") }
        return count
    }

    func counters() async throws -> APNsSimulatorCounters {
        let body = try await BenchmarkHTTP.get(base.appendingPathComponent("counters"))
        return try JSONDecoder().decode(APNsSimulatorCounters.self, from: Data(body))
    }

    func reset() async throws {
        let url = base.appendingPathComponent("reset")
        let answer = try await BenchmarkHTTP.request(.POST, url)
        guard (200..<300).contains(answer.status) else { throw BenchmarkError.failed("POST \(url) answered \(answer.status)") }
    }
}

/// One scenario: a fresh set of hosts, the campaign and the write load, the cut, the counts.
struct PartitionRun {
    let scenario: PartitionScenario
    let plan: PartitionPlan
    let pushfleet: String
    let apnsSim: String
    let logLevel: String
    let logger: Logger

    func run() async throws -> FaultOutcome {
        let stack = try await PartitionStack.start(plan: plan, pushfleet: pushfleet, apnsSim: apnsSim, logLevel: logLevel, logger: logger)
        let fleet = stack.fleet(pushfleet: pushfleet, logLevel: logLevel)
        let redis = RedisClusterClient(configuration: stack.cluster.configuration, logger: logger)
        var producer: KafkaProducer?
        do {
            producer = try KafkaProducer(
                configuration: KafkaProducerConfiguration(bootstrapServers: stack.broker.bootstrapServers), logger: logger)
            let outcome = try await campaign(stack: stack, fleet: fleet, producer: producer!, redis: redis)
            await producer?.close()
            await redis.shutdown()
            await stack.stop()
            return outcome
        } catch {
            fleet.stopAll()
            await producer?.close()
            await redis.shutdown()
            await stack.stop()
            throw error
        }
    }

    private func campaign(stack: PartitionStack, fleet: WorkerFleet, producer: KafkaProducer, redis: RedisClusterClient) async throws -> FaultOutcome
    {
        try await CampaignHarness.register(plan.devices, shards: 16, redis: redis)
        try fleet.start(plan.workers)
        try await CampaignHarness.warmUp(producer: producer, redis: redis)
        try await fleet.awaitSettled(
            CampaignHarness.groupPartitions(prefix: "pushfleet", jobs: plan.jobPartitions, deliveries: plan.deliveryPartitions))
        let simulator = stack.simulatorControl
        try await simulator.reset()

        let writes = RegistryWriteLoad(apis: stack.apiURLs, app: EmbeddedStack.otherApp, apiKey: stack.writeKey)
        let writing = Task { await writes.run() }
        let injector = PartitionInjector(scenario: scenario, plan: plan, stack: stack)
        var outcome: FaultOutcome
        do {
            outcome = try await MeasuredCampaign(
                scenario: scenario.rawValue, fault: scenario.summary(plan), devices: plan.devices, rate: plan.rate, stall: .seconds(60)
            ).run(
                simulator: simulator, fleet: fleet, producer: producer, redis: redis,
                inject: { start in try await injector.run(start: start) },
                inFlightAtFaults: { windows, _ in injector.inFlightAtFaults(windows: windows) })
        } catch {
            writes.stop()
            await writing.value
            throw error
        }
        writes.stop()
        await writing.value
        // The writes are read back once the cluster has settled after the cut (an isolated
        // master rejoins as its successor's replica).
        try stack.network.healAll()
        try await stack.cluster.waitUntilReady(masters: 3, replicasPerMaster: 1)
        try await redis.refreshTopology()
        outcome.registryWrites = try await writes.verify(DeviceRegistry(client: redis))
        return outcome
    }
}

/// Makes one scenario's cuts during the campaign published at `start`, returning when they
/// struck (seconds since then).
struct PartitionInjector: Sendable {
    let scenario: PartitionScenario
    let plan: PartitionPlan
    let stack: PartitionStack

    private var network: TestNetwork { stack.network }

    func run(start: ContinuousClock.Instant) async throws -> [FaultOutcome.Window] {
        var elapsed: Double { (ContinuousClock.now - start).seconds }
        try await Task.sleep(until: start + plan.faultStart)
        switch scenario {
        case .baseline:
            return []
        case .workerCutFromRedis:
            return try await cut(["worker-1"], from: PartitionStack.redisHosts, kind: "worker-1 | Redis", start: start)
        case .workerCutFromKafka:
            return try await cut(["worker-1"], from: ["kafka"], kind: "worker-1 | Kafka", start: start)
        case .workerCutFromAPNs:
            return try await cut(["worker-1"], from: ["apns"], kind: "worker-1 | APNs", start: start)
        case .redisMasterMinority:
            let master = try await stack.cluster.topology().masters[0]
            let minority = [stack.host(of: master.address), "worker-1"]
            return try await cut(minority, from: network.hosts(except: minority), kind: "\(minority[0]) + worker-1 | the rest", start: start)
        case .zoneDown:
            let topology = try await stack.cluster.topology()
            let master = topology.shards[0].master!
            guard let replica = topology.shards[1].nodes.first(where: { $0.role == .replica }) else {
                throw BenchmarkError.failed("the second shard has no replica: \(topology)")
            }
            let zone = ["worker-1", stack.host(of: master.address), stack.host(of: replica.address)]
            let from = elapsed
            for host in zone { try network.cut([host], from: network.hosts(except: [host])) }
            try await Task.sleep(for: plan.outage)
            try network.healAll()
            return [.init(start: from, end: elapsed, kind: "zone down: \(zone.joined(separator: ", "))")]
        case .flappingLink:
            let from = elapsed
            let until = ContinuousClock.now + plan.flapping
            let others = network.hosts(except: ["worker-1"])
            while ContinuousClock.now < until {
                try network.cut(["worker-1"], from: others)
                try await Task.sleep(for: .seconds(2))
                try network.heal(["worker-1"], from: others)
                try await Task.sleep(for: .seconds(2))
            }
            return [.init(start: from, end: elapsed, kind: "worker-1's link flapping")]
        }
    }

    private func cut(_ side: [String], from other: [String], kind: String, start: ContinuousClock.Instant) async throws -> [FaultOutcome.Window] {
        let from = (ContinuousClock.now - start).seconds
        try network.cut(side, from: other)
        try await Task.sleep(for: plan.outage)
        try network.heal(side, from: other)
        return [.init(start: from, end: (ContinuousClock.now - start).seconds, kind: kind)]
    }

    /// The most notifications the cuts could leave unsettled: the window of the worker cut off,
    /// once per flap of its link; every worker's where the cut moves every assignment.
    func inFlightAtFaults(windows: [FaultOutcome.Window]) -> Int {
        switch scenario {
        case .baseline: 0
        case .flappingLink: Int((plan.flapping.seconds / 4).rounded(.up)) * plan.notificationsInFlight
        case _ where scenario.movesEveryAssignment: plan.workers * plan.notificationsInFlight
        default: plan.notificationsInFlight
        }
    }
}

struct PartitionReport: Codable {
    var devices: Int
    var rate: Double
    var quick: Bool
    /// Seconds each cut lasts.
    var outage: Double
    var workers = 3
    var scenarios: [FaultOutcome]

    func markdown(chart: String) -> String {
        var lines = [
            "Each scenario: fresh test hosts (a network namespace each, one link into a bridge; `TestNetwork`): three worker hosts with a `pushfleet worker` and a `pushfleet api` each, a Redis Cluster of 3 masters and 3 replicas on six hosts (node timeout 2 s), a Tansu broker (librdkafka \(KafkaLibrary.version)) and `apns-sim` on a host each; \(devices) registered devices, a broadcast throttled to \(Int(rate))/s, the cut made a quarter into the campaign (a cut drops every packet between two hosts, silently, both ways), each cut \(Int(outage)) s. Beside the campaign, binds and unbinds of other devices through the three APIs: *writes acknowledged* answered 200, *lost* were acknowledged and are not in the registry afterwards (read once the cluster has settled). *Missed*, *sent twice*, *shown twice*, *removed*, *throughput* and *recovery* as in the fault suite (docs/faults.md); *in flight*: the window of the worker cut off, once per flap; all three workers' windows where a master fails over with a worker cut off (every assignment moves).",
            "",
            "![accepted per second, cuts shaded](\(chart))",
            "",
            "| scenario | cut | missed | sent twice / in flight | shown twice | removed | registry writes acknowledged / refused / unanswered | acknowledged writes lost | seconds | throughput vs baseline | during | recovery (s) | workers ended | meets expectations |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for outcome in scenarios {
            let ends = Dictionary(grouping: outcome.workerEnds, by: \.label).map { "\($1.count)× \($0)" }.sorted().joined(separator: ", ")
            let writes = outcome.registryWrites
            lines.append(
                "| \(outcome.scenario) | \(outcome.fault) | \(outcome.missed) | \(outcome.sentTwice) / \(outcome.inFlightAtFaults) | \(outcome.shownTwice) | \(outcome.removed) | \(writes.map { "\($0.acknowledged) / \($0.refused) / \($0.unanswered)" } ?? "–") | \(writes.map { "\($0.lost)" + ($0.lostExamples.isEmpty ? "" : " (\($0.lostExamples.joined(separator: ", ")))") } ?? "–") | \(String(format: "%.1f", outcome.seconds)) | \(String(format: "%.0f%%", outcome.throughputVsBaseline * 100)) | \(outcome.throughputDuringFaults.map { String(format: "%.0f%%", $0 * 100) } ?? "–") | \(outcome.recoverySeconds.map { String(format: "%.1f", $0) } ?? "–") | \(ends) | \(outcome.violations.isEmpty ? "yes" : "**no**: " + outcome.violations.joined(separator: "; ")) |"
            )
        }
        return lines.joined(separator: "\n")
    }
}
