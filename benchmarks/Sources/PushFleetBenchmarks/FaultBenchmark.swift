import APNs
import APNsCore
import APNsSimulator
import ArgumentParser
import EmbeddedKafka
import EmbeddedStack
import Foundation
import Kafka
import LocalRedis
import Logging
import PushCore
import PushStore
import Redis
import Synchronization

/// The fault suite: what PushFleet survives, in counts. Each scenario runs a throttled broadcast
/// on a fresh embedded stack with real `pushfleet worker` processes, injects its fault mid-campaign
/// and reports notifications sent and accepted, **missed** (valid tokens never accepted), **sent
/// twice** (tokens accepted more than once, also as a ratio to what was in flight where the
/// faults struck), tokens removed (must be 0: every token is valid), time to recover, throughput
/// against the baseline measured in the same run, peak worker RSS and how every worker ended.
struct FaultBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faults",
        abstract: "Broadcasts through injected faults (kills, rebalances, Redis and Kafka outages, APNs storms), with counts.")

    @Flag(help: "Quick mode for CI: 20,000 devices at 2,000/s, short faults, results named faults-quick.")
    var quick = false
    @Option(help: "Registered devices; the broadcast goes to all of them (default 200,000; 20,000 with --quick).") var devices: Int?
    @Option(help: "The campaign's rate, notifications per second (default 5,000; 2,000 with --quick).") var rate: Double?
    @Option(help: "Scenarios to run, comma separated (default all; baseline always runs first).") var scenarios: String?
    @Option(help: "Worker processes at the start of every scenario.") var workers = 3
    @Option(name: .customLong("kill-interval-s"), help: "worker-kill: seconds between kills (default 20; 4 with --quick).")
    var killIntervalSeconds: Int?
    @Option(
        name: .customLong("rtt-ms"),
        help:
            "Round trip to the simulator, which then behaves like Apple (its windows and SETTINGS); 0: loopback. Results named faults(-quick)-<N>ms.")
    var roundTripMs = 0
    @Option(
        help:
            "The Kafka: embedded (librdkafka's mock cluster) or tansu (a Tansu broker process; run with a current librdkafka, scripts/current-librdkafka.sh). Results named …-tansu."
    )
    var kafka: LocalKafka.Kind = .embedded
    @Option(help: "The pushfleet binary (build it in release mode).") var pushfleet = ".build/release/pushfleet"
    @Option(help: "Log level of the worker processes (their standard error).") var workerLogLevel = "error"
    @Option(help: "The chart script (matplotlib).") var plotScript = "benchmarks/plot_faults.py"
    @Option(help: "The Python interpreter with matplotlib.") var python = "python3"
    @OptionGroup var results: ResultOptions

    func run() async throws {
        let selected = try selectedScenarios()
        guard roundTripMs >= 0 else { throw ValidationError("--rtt-ms must be at least 0") }
        var plan = FaultPlan(quick: quick, devices: devices ?? (quick ? 20_000 : 200_000), rate: rate ?? (quick ? 2_000 : 5_000))
        plan.roundTrip = .milliseconds(roundTripMs)
        plan.kafka = kafka
        guard workers >= 2 else { throw ValidationError("--workers must be at least 2: the scenarios kill and replace workers") }
        plan.workers = workers
        if let killIntervalSeconds {
            guard killIntervalSeconds > 0 else { throw ValidationError("--kill-interval-s must be at least 1") }
            plan.chosenKillInterval = .seconds(killIntervalSeconds)
        }
        if kafka != .embedded, let hooked = selected.first(where: \.needsEmbeddedKafka) {
            throw ValidationError("scenario \(hooked.rawValue) injects its fault through the embedded cluster's hooks; run it with --kafka embedded")
        }
        var logger = Logger(label: "pushfleet.bench.faults")
        logger.logLevel = .error
        var outcomes: [FaultOutcome] = []
        var baselineRate: Double?
        for scenario in selected {
            print("scenario \(scenario.rawValue): \(scenario.summary(plan))")
            var outcome = try await FaultRun(scenario: scenario, plan: plan, pushfleet: pushfleet, workerLogLevel: workerLogLevel, logger: logger)
                .run()
            if scenario == .baseline { baselineRate = outcome.notificationsPerSecond }
            outcome.judge(baselineRate: baselineRate ?? plan.rate, judgesThroughput: !quick && scenario.keepsThroughput)
            print(outcome.line)
            outcomes.append(outcome)
        }
        let report = FaultReport(
            devices: plan.devices, rate: plan.rate, quick: quick, workers: plan.workers, roundTripMilliseconds: roundTripMs, kafka: kafka.rawValue,
            scenarios: outcomes)
        let name =
            (quick ? "faults-quick" : "faults") + (roundTripMs > 0 ? "-\(roundTripMs)ms" : "") + (kafka == .embedded ? "" : "-\(kafka.rawValue)")
        try results.write(name: name, result: report, markdown: report.markdown(chart: "\(name).png"))
        try results.plot(name: name, python: python, script: plotScript)
        try FaultOutcome.requireExpectationsMet(outcomes)
    }

    private func selectedScenarios() throws -> [FaultScenario] {
        guard let scenarios else {
            return FaultScenario.allCases.filter { (!quick || $0.runsInQuickMode) && (kafka == .embedded || !$0.needsEmbeddedKafka) }
        }
        return try FaultScenario.parse(scenarios, baseline: .baseline)
    }
}

/// Sizes and timings shared by every scenario of a run.
struct FaultPlan {
    var quick: Bool
    var devices: Int
    var rate: Double
    /// Workers at the start of every scenario.
    var workers = 3
    /// `worker.notifications-in-flight` of each worker: the most one kill can leave unsettled.
    var notificationsInFlight = 2_000
    var streamsPerConnection = 100
    /// The simulator's distance: zero on loopback, else it behaves like Apple that far away.
    var roundTrip: Duration = .zero
    var kafka: LocalKafka.Kind = .embedded

    /// The campaign's length without faults.
    var campaignSeconds: Double { Double(devices) / rate }
    /// When the fault starts: a quarter into the campaign, with its expansion under way.
    var faultStart: Duration { .milliseconds(Int(campaignSeconds * 250)) }
    /// How long an outage lasts.
    var outage: Duration { quick ? .seconds(3) : .seconds(30) }
    /// How long a storm lasts.
    var storm: Duration { quick ? .seconds(3) : .seconds(15) }
    /// The workers' resend policy: the stack's short delays (20 ms doubling, at most 1 s) with as
    /// many attempts as outlast twice the longest storm. With the stack's default 5 attempts, the
    /// whole budget (about 1 s with the drainer's polls) is shorter than a storm: a token the storm
    /// refused 5 times running was dead-lettered, as the policy says, and counted missed (once in
    /// about 30 runs of apns-storm here), which is not what the scenarios measure.
    var resendSettings: [String] {
        let (base, cap) = (20, 1_000)
        var (attempts, spanned, delay) = (1, 0, base)
        while spanned < 2 * Int(storm.components.seconds) * 1_000 {
            spanned += min(delay, cap)
            delay *= 2
            attempts += 1
        }
        return ["base-delay-ms: \(base)", "max-delay-ms: \(cap)", "max-attempts: \(attempts)"]
    }
    /// `--kill-interval-s`, when given.
    var chosenKillInterval: Duration?
    var killInterval: Duration { chosenKillInterval ?? (quick ? .seconds(4) : .seconds(20)) }
    var rebalanceInterval: Duration { quick ? .seconds(1) : .seconds(3) }
    /// `apns.credential-suspension-seconds` of the workers: the default minute, 10 s in quick
    /// mode, where the provider-token-revoked scenario would otherwise spend a minute waiting.
    var credentialSuspensionSeconds: Int { quick ? 10 : 60 }

    /// How long a campaign may go without progress, once its faults are over, before it is ended
    /// and judged as it stands: a minute; two for a revoked provider token, which waits out its
    /// suspension. Redis restarted without its data leaves the job nothing to finish from (its
    /// state and markers are gone; the scenario is reported, not gated), so in quick mode it ends
    /// after 20 s, where CI spent the whole minute waiting.
    func stall(for scenario: FaultScenario) -> Duration {
        switch scenario {
        case .providerTokenRevoked: .seconds(120)
        case .redisRestartEmpty where quick: .seconds(20)
        default: .seconds(60)
        }
    }
}

enum FaultScenario: String, CaseIterable, Codable {
    case baseline
    case workerKill = "worker-kill"
    case rebalanceStorm = "rebalance-storm"
    case redisUnreachable = "redis-unreachable"
    case redisRestartAOF = "redis-restart-aof"
    case redisRestartEmpty = "redis-restart-empty"
    case kafkaErrors = "kafka-errors"
    case kafkaBrokerDown = "kafka-broker-down"
    case apnsStorm = "apns-storm"
    case apnsSlow = "apns-slow"
    case apnsSilent = "apns-silent"
    case providerTokenRevoked = "provider-token-revoked"

    /// The broker down/up hook of librdkafka 2.0's mock cluster re-binds its port and aborts the
    /// process when that fails; it runs on demand, not in CI.
    var runsInQuickMode: Bool { self != .kafkaBrokerDown }

    /// Whether the fault is made through the embedded cluster's hooks (injected errors, brokers
    /// down), which a Tansu broker does not have.
    var needsEmbeddedKafka: Bool { self == .kafkaErrors || self == .kafkaBrokerDown }

    /// Whether throughput during the fault is expected to stay at 70% of the baseline: not while
    /// the state store or the provider credential is away, when nothing can be sent by design.
    var keepsThroughput: Bool {
        switch self {
        case .redisUnreachable, .redisRestartAOF, .redisRestartEmpty, .providerTokenRevoked, .apnsSilent, .kafkaBrokerDown: false
        default: true
        }
    }

    /// Whether every valid token must be accepted: not after a restart that lost the registry.
    var expectsNothingMissed: Bool { self != .redisRestartEmpty }

    func summary(_ plan: FaultPlan) -> String {
        switch self {
        case .baseline: "no fault, \(plan.workers) workers"
        case .workerKill: "SIGKILL a worker every \(plan.killInterval), restarted at once"
        case .rebalanceStorm: "a worker joins and another leaves every \(plan.rebalanceInterval) for \(plan.storm)"
        case .redisUnreachable: "redis-server frozen (SIGSTOP) for \(plan.outage)"
        case .redisRestartAOF: "redis-server killed and restarted with its append-only file (fsync every second)"
        case .redisRestartEmpty: "redis-server killed and restarted without persistence: its data is gone"
        case .kafkaErrors: "produce, fetch and commit requests fail with retryable errors for \(plan.storm)"
        case .kafkaBrokerDown: "one of three Kafka brokers down for \(plan.outage)"
        case .apnsStorm: "for \(plan.storm): 2% 500, 3% 503, 2% 429, GOAWAY every 2,000 streams, a reset every 5,000, 30% TLS handshakes aborted"
        case .apnsSlow: "answers slowed to 1–2 s for \(plan.storm)"
        case .apnsSilent: "every connection goes silent after 300 streams for \(plan.storm)"
        case .providerTokenRevoked:
            "the provider key refused (403 InvalidProviderToken) for \(plan.storm), then trusted again (suspension \(plan.credentialSuspensionSeconds) s)"
        }
    }
}

/// One scenario's campaign.
struct FaultRun {
    let scenario: FaultScenario
    let plan: FaultPlan
    let pushfleet: String
    let workerLogLevel: String
    let logger: Logger

    func run() async throws -> FaultOutcome {
        var options = EmbeddedStack.Options()
        options.kafka = plan.kafka
        options.deliveryPartitions = 32
        options.jobPartitions = 8
        options.simulatorThreads = 1
        // What a request may take before the connection must prove it is alive (PING): the
        // production default, not the stack's generous one, or a silent connection holds its
        // streams for a minute.
        options.apnsRequestTimeoutMilliseconds = Int(APNsClientConfiguration().requestTimeout.components.seconds * 1_000)
        options.workerSettings = ["chunks-in-flight: 4", "notifications-in-flight: \(plan.notificationsInFlight)"]
        options.resendSettings = plan.resendSettings
        if scenario == .redisRestartAOF {
            options.redisArguments = ["--appendonly", "yes", "--appendfsync", "everysec"]
        }
        if scenario == .kafkaBrokerDown {
            options.kafkaBrokers = 3
        }
        if scenario == .kafkaErrors {
            // The mock would lose chunks under injected produce errors otherwise (docs/faults.md).
            options.kafkaProperties = EmbeddedKafkaCluster.producerPropertiesForInjectedErrors
        }
        if plan.roundTrip > .zero {
            // At a distance the pools size themselves (the default), as a worker facing Apple's would.
            options.apnsConnectionsPerPool = nil
        }
        let stack = try await EmbeddedStack.start(options, logger: logger) {
            $0.tracksDuplicates = true
            $0.latency = .uniform(.milliseconds(2), .milliseconds(10))
            if plan.roundTrip > .zero { $0.behaveLikeApple(roundTrip: plan.roundTrip) }
        }
        defer { try? FileManager.default.removeItem(at: stack.directory) }
        let fleet = WorkerFleet(
            binary: pushfleet, stack: stack, logLevel: workerLogLevel,
            environment: [
                "PUSHFLEET__APNS__STREAMS_PER_CONNECTION": String(plan.streamsPerConnection),
                "PUSHFLEET__APNS__CREDENTIAL_SUSPENSION_SECONDS": String(plan.credentialSuspensionSeconds),
            ])
        return try await CampaignHarness.withClients(stack: stack, fleet: fleet, logger: logger) { producer, redis in
            try await CampaignHarness.register(plan.devices, shards: stack.options.registryShards, redis: redis)
            return try await campaign(stack: stack, fleet: fleet, producer: producer, redis: redis)
        }
    }

    private func campaign(stack: EmbeddedStack, fleet: WorkerFleet, producer: KafkaProducer, redis: any RedisCommands) async throws -> FaultOutcome {
        try fleet.start(plan.workers)
        try await CampaignHarness.warmUp(producer: producer, redis: redis)
        try await fleet.awaitSettled(CampaignHarness.groupPartitions(stack))
        try await stack.simulator.reset()

        let injector = FaultInjector(scenario: scenario, plan: plan, stack: stack, fleet: fleet)
        return try await MeasuredCampaign(
            scenario: scenario.rawValue, fault: scenario.summary(plan), devices: plan.devices, rate: plan.rate,
            stall: plan.stall(for: scenario)
        ).run(
            simulator: stack.simulator, fleet: fleet, producer: producer, redis: redis,
            inject: { start in try await injector.run(start: start) },
            inFlightAtFaults: { windows, counters in injector.inFlightAtFaults(windows: windows, counters: counters) })
    }
}

/// What a campaign's measurement reads from the APNs simulator: the one in this process, or an
/// `apns-sim` on a host of its own through its control port.
protocol SimulatorCounting: Sendable {
    func acceptedCount() async throws -> Int
    func counters() async throws -> APNsSimulatorCounters
}

extension APNsSimulator: SimulatorCounting {}

/// One broadcast through `pushfleet worker` processes with a fault injected, measured: the
/// campaign is published, `inject` runs beside it while the simulator's accepted count is
/// sampled every 250 ms, and the outcome counts what was missed, sent twice and removed. Shared
/// by the fault suite and the partition suite.
struct MeasuredCampaign {
    let scenario: String
    let fault: String
    let devices: Int
    let rate: Double
    /// How long without progress, once the faults are over, ends the campaign.
    let stall: Duration

    func run(
        simulator: any SimulatorCounting, fleet: WorkerFleet, producer: KafkaProducer, redis: any RedisCommands,
        inject: @escaping @Sendable (ContinuousClock.Instant) async throws -> [FaultOutcome.Window],
        inFlightAtFaults: ([FaultOutcome.Window], APNsSimulatorCounters) -> Int
    ) async throws -> FaultOutcome {
        let jobs = JobStore(client: redis)
        let jobID = "campaign-\(scenario)"
        let start = ContinuousClock.now
        try await CampaignHarness.publish(
            PushJob(
                id: jobID, app: EmbeddedStack.app, environment: .sandbox, audience: .broadcast,
                notification: APNsPayload(["aps": ["alert": ["title": "Faults", "body": "a campaign through a fault"]]]),
                headers: PushHeaders(pushType: .alert), throttle: ThrottleOverride(ratePerSecond: rate)),
            producer: producer)
        let injected = InjectionProgress()
        let faults = Task {
            defer { injected.finish() }
            return try await inject(start)
        }

        var samples: [FaultOutcome.Sample] = []
        var accepted = 0
        var lastProgress = ContinuousClock.now
        while true {
            try await Task.sleep(for: .milliseconds(250))
            fleet.sample()
            let now = try await simulator.acceptedCount()
            samples.append(FaultOutcome.Sample(seconds: (ContinuousClock.now - start).seconds, accepted: now))
            if now > accepted {
                accepted = now
                lastProgress = .now
            }
            let faultsDone = injected.isFinished
            if faultsDone && accepted >= devices {
                let counters = try await simulator.counters()
                if counters.acceptedPerToken.count >= devices { break }
            }
            if ContinuousClock.now - lastProgress > stall && faultsDone {
                break
            }
        }
        let windows = try await faults.value
        let seconds = (samples.last?.seconds ?? 0)
        let counters = try await simulator.counters()
        fleet.stopAll()
        let statistics = try await jobs.statistics(jobID: jobID)
        let tokensTwice = counters.acceptedPerToken.values.filter { $0 > 1 }.count
        return FaultOutcome(
            scenario: scenario, fault: fault, devices: devices, sent: counters.requests,
            accepted: counters.accepted, missed: devices - counters.acceptedPerToken.count,
            sentTwice: tokensTwice, shownTwice: counters.shownTwice, inFlightAtFaults: inFlightAtFaults(windows, counters),
            removed: (statistics["removed"] ?? 0) + (statistics["suspect"] ?? 0),
            seconds: seconds, notificationsPerSecond: Double(counters.acceptedPerToken.count) / max(seconds, 0.001),
            windows: windows, workersStarted: fleet.started, peakWorkerRSSMegabytes: fleet.peakMegabytes,
            workerEnds: fleet.ended, rejections: counters.rejections, samples: samples)
    }
}

/// Whether the injector has finished, for the sampling loop.
final class InjectionProgress: Sendable {
    private let finished = Atomic<Bool>(false)
    var isFinished: Bool { finished.load(ordering: .acquiring) }
    func finish() { finished.store(true, ordering: .releasing) }
}

/// Carries out one scenario's fault, returning when it struck (seconds since the campaign's
/// publication), so the report can mark them and time the recovery.
struct FaultInjector: Sendable {
    let scenario: FaultScenario
    let plan: FaultPlan
    let stack: EmbeddedStack
    let fleet: WorkerFleet

    /// Injects the fault into the campaign published at `start`.
    func run(start: ContinuousClock.Instant) async throws -> [FaultOutcome.Window] {
        var elapsed: Double { (ContinuousClock.now - start).seconds }
        try await Task.sleep(until: start + plan.faultStart)
        switch scenario {
        case .baseline:
            return []
        case .workerKill:
            var windows: [FaultOutcome.Window] = []
            // Kills until the campaign's planned end; each killed worker is replaced at once.
            let end = start + .milliseconds(Int(plan.campaignSeconds * 1000))
            var victim = 0
            repeat {
                let at = elapsed
                fleet.kill(victim)
                try fleet.start()
                windows.append(.init(start: at, end: at, kind: "SIGKILL"))
                victim += 1
                try await Task.sleep(for: plan.killInterval)
            } while ContinuousClock.now < end
            return windows
        case .rebalanceStorm:
            let from = elapsed
            let until = ContinuousClock.now + plan.storm
            while ContinuousClock.now < until {
                try fleet.start()
                try await Task.sleep(for: plan.rebalanceInterval)
                // The oldest leaves (SIGTERM: it drains its chunks and leaves the groups while
                // the storm goes on): the fleet keeps its size, its members change.
                fleet.beginStop(0)
                try await Task.sleep(for: plan.rebalanceInterval)
            }
            return [.init(start: from, end: elapsed, kind: "joins and leaves")]
        case .redisUnreachable:
            let server = try redisServer()
            let from = elapsed
            await server.pause()
            try await Task.sleep(for: plan.outage)
            await server.resume()
            return [.init(start: from, end: elapsed, kind: "Redis frozen")]
        case .redisRestartAOF, .redisRestartEmpty:
            let server = try redisServer()
            let from = elapsed
            try await server.restart()
            return [.init(start: from, end: elapsed, kind: "Redis restarted")]
        case .kafkaErrors:
            let from = elapsed
            let until = ContinuousClock.now + plan.storm
            while ContinuousClock.now < until {
                stack.cluster.injectRequestErrors(.produce, errors: [.notLeaderOrFollower, .requestTimedOut])
                stack.cluster.injectRequestErrors(.fetch, errors: [.notLeaderOrFollower])
                stack.cluster.injectRequestErrors(.offsetCommit, errors: [.requestTimedOut])
                try await Task.sleep(for: .milliseconds(200))
            }
            for api in [KafkaAPIKey.produce, .fetch, .offsetCommit] { stack.cluster.clearRequestErrors(api) }
            return [.init(start: from, end: elapsed, kind: "Kafka errors")]
        case .kafkaBrokerDown:
            let from = elapsed
            try stack.cluster.setBrokerDown(2)
            try await Task.sleep(for: plan.outage)
            try stack.cluster.setBrokerUp(2)
            return [.init(start: from, end: elapsed, kind: "broker down")]
        case .apnsStorm:
            return try await storm(
                start: start,
                faults: APNsSimulatorFaults(
                    internalServerErrorRate: 0.02, serviceUnavailableRate: 0.03, tooManyRequestsRate: 0.02, goAwayEveryStreams: 2_000,
                    connectionResetEveryStreams: 5_000, tlsHandshakeFailureRate: 0.3),
                kind: "APNs storm")
        case .apnsSlow:
            return try await storm(start: start, faults: APNsSimulatorFaults(), latency: .uniform(.seconds(1), .seconds(2)), kind: "answers in 1–2 s")
        case .apnsSilent:
            return try await storm(start: start, faults: APNsSimulatorFaults(unresponsiveAfterStreams: 300), kind: "silent connections")
        case .providerTokenRevoked:
            return try await storm(start: start, faults: APNsSimulatorFaults(rejectsProviderTokens: true), kind: "provider key refused")
        }
    }

    private func storm(
        start: ContinuousClock.Instant, faults: APNsSimulatorFaults, latency: APNsSimulatorLatency? = nil, kind: String
    ) async throws -> [FaultOutcome.Window] {
        var elapsed: Double { (ContinuousClock.now - start).seconds }
        let from = elapsed
        try await stack.simulator.setFaults(faults, latency: latency)
        try await Task.sleep(for: plan.storm)
        try await stack.simulator.setFaults(APNsSimulatorFaults(), latency: latency == nil ? nil : .uniform(.milliseconds(2), .milliseconds(10)))
        return [.init(start: from, end: elapsed, kind: kind)]
    }

    private func redisServer() throws -> LocalRedisServer {
        guard let server = stack.redisServer else { throw BenchmarkError.failed("the fault suite runs on one redis-server") }
        return server
    }

    /// The most notifications the faults could have caught in flight: a killed worker's whole
    /// window, or the streams of each connection lost (reset, GOAWAY, silenced).
    func inFlightAtFaults(windows: [FaultOutcome.Window], counters: APNsSimulatorCounters) -> Int {
        switch scenario {
        case .workerKill:
            return windows.count * plan.notificationsInFlight
        case .rebalanceStorm, .redisRestartEmpty:
            return max(1, fleet.started - plan.workers) * plan.notificationsInFlight
        default:
            return (counters.connectionResets + counters.goAways + counters.unresponsiveConnections) * plan.streamsPerConnection
        }
    }
}

struct FaultOutcome: Codable {
    struct Sample: Codable {
        var seconds: Double
        var accepted: Int
    }

    struct Window: Codable {
        var start: Double
        var end: Double
        var kind: String
    }

    var scenario: String
    var fault: String
    var devices: Int
    /// Requests the simulator received.
    var sent: Int
    /// Requests it answered 200 (copies included).
    var accepted: Int
    /// Valid tokens never accepted.
    var missed: Int
    /// Tokens accepted more than once.
    var sentTwice: Int
    /// Tokens that would show more than one notification: copies without a shared
    /// `apns-collapse-id` (the campaign's alerts carry one derived from the job).
    var shownTwice: Int
    /// The most notifications the faults could have caught in flight (see ``FaultInjector``).
    var inFlightAtFaults: Int
    /// Valid tokens removed or kept aside (must be 0).
    var removed: Int
    var seconds: Double
    var notificationsPerSecond: Double
    var windows: [Window]
    var workersStarted: Int
    var peakWorkerRSSMegabytes: Double
    var workerEnds: [WorkerFleet.Ended]
    var rejections: [String: Int]
    var samples: [Sample]
    /// The bind/unbind load beside the campaign, where a suite runs one (the partition suite).
    var registryWrites: RegistryWriteLoad.Result?
    /// Filled by ``judge(baselineRate:judgesThroughput:)``.
    var throughputVsBaseline: Double = 0
    var throughputDuringFaults: Double?
    var recoverySeconds: Double?
    var violations: [String] = []

    var sentTwiceRatio: Double { inFlightAtFaults == 0 ? (sentTwice == 0 ? 0 : .infinity) : Double(sentTwice) / Double(inFlightAtFaults) }

    /// Rates against the baseline, the recovery time and the expectations the scenario missed;
    /// with `judgesThroughput`, a campaign below 70% of the baseline's rate misses one; so does
    /// more sent twice than in flight.
    mutating func judge(baselineRate: Double, judgesThroughput: Bool) {
        let kind = FaultScenario(rawValue: scenario) ?? .baseline
        throughputVsBaseline = notificationsPerSecond / baselineRate
        if let first = windows.first, let last = windows.last, last.end > first.start {
            throughputDuringFaults = rate(from: first.start, to: last.end) / baselineRate
        }
        if let last = windows.last {
            // Recovered: the first whole second after the fault at 70% of the baseline's rate,
            // or the end of the campaign.
            var t = last.end
            while t + 1 <= seconds, rate(from: t, to: t + 1) < 0.7 * baselineRate { t += 0.25 }
            recoverySeconds = min(t, seconds) - last.end
        }
        if kind.expectsNothingMissed && missed > 0 { violations.append("\(missed) missed") }
        if removed > 0 { violations.append("\(removed) valid tokens removed or kept aside") }
        if workerEnds.contains(where: { $0.kind == .crashed }) { violations.append("a worker crashed") }
        if workerEnds.contains(where: { $0.kind == .failed }) { violations.append("a worker exited with an error") }
        if kind != .redisRestartEmpty && sentTwiceRatio > 1 {
            violations.append("sent twice \(sentTwice) > in flight \(inFlightAtFaults)")
        }
        if kind != .redisRestartEmpty && shownTwice > 0 { violations.append("\(shownTwice) shown twice") }
        if let registryWrites, registryWrites.lost > 0 {
            violations.append("\(registryWrites.lost) acknowledged registry writes lost")
        }
        if judgesThroughput && throughputVsBaseline < 0.7 {
            violations.append(String(format: "throughput %.0f%% of the baseline", throughputVsBaseline * 100))
        }
    }

    /// Accepted per second between two moments, from the samples.
    private func rate(from: Double, to: Double) -> Double {
        func accepted(at time: Double) -> Int { samples.last(where: { $0.seconds <= time })?.accepted ?? 0 }
        return Double(accepted(at: to) - accepted(at: from)) / max(to - from, 0.25)
    }

    var line: String {
        String(
            format:
                "%@: missed %d, sent twice %d (in flight %d), shown twice %d, removed %d, %.1f s, %.0f/s (%.0f%% of baseline), peak RSS %.0f MB%@",
            scenario, missed, sentTwice, inFlightAtFaults, shownTwice, removed, seconds, notificationsPerSecond, throughputVsBaseline * 100,
            peakWorkerRSSMegabytes, violations.isEmpty ? "" : " — BELOW EXPECTATIONS: " + violations.joined(separator: "; "))
    }
}

struct FaultReport: Codable {
    var devices: Int
    var rate: Double
    var quick: Bool
    var workers = 3
    /// The simulator's round trip (0: loopback).
    var roundTripMilliseconds: Int = 0
    /// `embedded` (librdkafka's mock cluster in the benchmark process) or `tansu`.
    var kafka = "embedded"
    var scenarios: [FaultOutcome]

    func markdown(chart: String) -> String {
        var lines = [
            "Each scenario: a fresh embedded stack (\(kafka == "embedded" ? "mock Kafka and the simulator in the benchmark process" : "a \(kafka) broker in a process of its own, librdkafka \(KafkaLibrary.version); the simulator in the benchmark process"), one redis-server\(roundTripMilliseconds > 0 ? "; the simulator behaves like Apple \(roundTripMilliseconds) ms of round trip away: every byte delayed, its windows and SETTINGS" : "")), \(devices) registered devices, a broadcast throttled to \(Int(rate))/s through \(workers) `pushfleet worker` processes (each `notifications-in-flight: 2000`), the fault injected a quarter into the campaign. *Missed*: valid tokens the simulator never accepted. *Sent twice*: tokens it accepted more than once, against *in flight*, the most the faults could have caught unsettled (a killed worker's window, or 100 streams per lost connection). *Shown twice*: tokens whose copies do not share an `apns-collapse-id` and so would show twice (the campaign's alerts carry one derived from the job: a copy replaces the first on the device; must be 0). *Removed*: valid tokens removed or kept aside (all tokens are valid). *Throughput*: distinct tokens accepted per second over the campaign, against the baseline of the same run; *during*: inside the fault windows. *Recovery*: from the fault's end to the first second back at 70% of the baseline rate. *Ended*: how the workers ended: `exit 0` stopped within the shutdown deadline, `exit 75 (deadline)` stopped at it with its work in progress left for the next owner (accepted), `signal 9` the kills of the scenario; any other signal is a crash and any other status a failure, and either fails the scenario. *Slowest stop*: the longest SIGTERM-to-exit of a worker the suite stopped.",
            "",
            "![accepted per second, faults shaded](\(chart))",
            "",
            "| scenario | fault | sent | missed | sent twice / in flight | shown twice | removed | seconds | throughput vs baseline | during | recovery (s) | peak RSS (MB) | workers started / ended | slowest stop (s) | meets expectations |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for outcome in scenarios {
            let ends = Dictionary(grouping: outcome.workerEnds, by: \.label).map { "\($1.count)× \($0)" }.sorted()
                .joined(separator: ", ")
            let slowestStop = outcome.workerEnds.compactMap(\.stopSeconds).max().map { String(format: "%.1f", $0) } ?? "–"
            lines.append(
                "| \(outcome.scenario) | \(outcome.fault) | \(outcome.sent) | \(outcome.missed) | \(outcome.sentTwice) / \(outcome.inFlightAtFaults) | \(outcome.shownTwice) | \(outcome.removed) | \(String(format: "%.1f", outcome.seconds)) | \(String(format: "%.0f%%", outcome.throughputVsBaseline * 100)) | \(outcome.throughputDuringFaults.map { String(format: "%.0f%%", $0 * 100) } ?? "–") | \(outcome.recoverySeconds.map { String(format: "%.1f", $0) } ?? "–") | \(String(format: "%.0f", outcome.peakWorkerRSSMegabytes)) | \(outcome.workersStarted) / \(ends) | \(slowestStop) | \(outcome.violations.isEmpty ? "yes" : "**no**: " + outcome.violations.joined(separator: "; ")) |"
            )
        }
        return lines.joined(separator: "\n")
    }
}

extension LocalKafka.Kind: ExpressibleByArgument {}

extension FaultOutcome {
    /// Throws naming every scenario that missed an expectation, with what it missed.
    static func requireExpectationsMet(_ outcomes: [FaultOutcome]) throws {
        let failed = outcomes.filter { !$0.violations.isEmpty }
        guard failed.isEmpty else {
            throw BenchmarkError.failed(
                "scenarios below expectations: "
                    + failed.map { "\($0.scenario) (\($0.violations.joined(separator: "; ")))" }.joined(separator: ", "))
        }
    }
}

extension CaseIterable where Self: RawRepresentable<String> & Equatable {
    /// The scenarios a `--scenarios a,b` list names, after `baseline`, which always runs first.
    static func parse(_ list: String, baseline: Self) throws -> [Self] {
        var chosen = [baseline]
        for name in list.split(separator: ",") {
            guard let scenario = Self(rawValue: String(name)) else {
                throw ValidationError("unknown scenario '\(name)'; known: \(allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if !chosen.contains(scenario) { chosen.append(scenario) }
        }
        return chosen
    }
}
