import APNsCore
import APNsSimulator
import ArgumentParser
import EmbeddedStack
import Foundation
import Kafka
import Logging
import PushConfiguration
import PushCore
import PushPipeline
import PushStore
import Redis
import ServiceLifecycle

/// `pushfleet demo`: the whole pipeline on the embedded stack — librdkafka's mock cluster, a
/// local `redis-server`, the APNs simulator over HTTP/2 + TLS — with a worker (expand, send) and
/// the feedback worker in this process. It registers demo devices (some of them uninstalled at
/// the simulator), runs a broadcast, an openid and a tag campaign plus three malformed jobs, shows
/// progress, prints each campaign's statistics and checks them against the simulator, the
/// registry and the dead-letter topic: exit 1 if anything disagrees.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the whole pipeline on the embedded stack (embedded Kafka, redis-server, APNs simulator).")

    @Option(help: "Demo devices to register.")
    var devices = 5_000

    @Option(help: "Every how many devices one has uninstalled the app (410 Unregistered at the simulator).")
    var uninstalledEvery = 50

    @Option(help: "Log level for the components (trace, debug, info, notice, warning, error).")
    var logLevel: String = "error"

    func validate() throws {
        guard devices >= 100 else { throw ValidationError("--devices must be at least 100") }
        guard uninstalledEvery >= 2 else { throw ValidationError("--uninstalled-every must be at least 2") }
    }

    func run() async throws {
        var logger = Logger(label: "pushfleet.demo")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .error
        let tokens = (0..<devices).map(Self.token)
        let uninstalled = stride(from: 0, to: devices, by: uninstalledEvery).map { tokens[$0] }

        say("starting the embedded stack: Kafka (mock cluster), redis-server, APNs simulator (HTTP/2 + TLS)")
        let stack = try await EmbeddedStack.start(logger: logger) { simulator in
            simulator.devices.unregistered = Dictionary(uniqueKeysWithValues: uninstalled.map { ($0.hex, 1) })
        }
        detail("kafka \(stack.cluster.bootstrapServers) · redis \(stack.redisServer.host):\(stack.redisServer.port) · simulator 127.0.0.1:\(stack.simulator.port)")
        detail("configuration \(stack.configurationPath)")
        let redis = RedisClient(configuration: stack.redisServer.configuration)
        let outcome: Result<Bool, any Error>
        do {
            outcome = .success(try await demo(stack: stack, redis: redis, tokens: tokens, uninstalled: uninstalled, logger: logger))
        } catch {
            outcome = .failure(error)
        }
        await redis.shutdown()
        await stack.stop()
        guard try outcome.get() else {
            print("✗ the figures disagree with what the simulator, Redis and Kafka hold")
            throw ExitCode.failure
        }
        print("✓ every notification has its outcome: accepted once, invalid tokens removed, bad jobs dead-lettered")
    }

    static func token(_ n: Int) -> DeviceToken {
        try! DeviceToken(hex: String(repeating: "de", count: 24) + String(format: "%016x", n))
    }

    private func demo(stack: EmbeddedStack, redis: RedisClient, tokens: [DeviceToken], uninstalled: [DeviceToken], logger: Logger) async throws -> Bool {
        let app = EmbeddedStack.app
        let registry = DeviceRegistry(client: redis, configuration: DeviceRegistryConfiguration(defaultShardCount: stack.configuration.registry.shards))
        say("registering \(tokens.count) devices (every 3rd tagged 'sports', every 10th logged in as a user)")
        let registrations = tokens.enumerated().map { index, token in
            DeviceRegistration(
                token: token, environment: .sandbox, openID: index.isMultiple(of: 10) ? "user-\(index / 10)" : nil,
                tags: index.isMultiple(of: 3) ? ["sports"] : [], registeredAt: 0)
        }
        try await registry.bind(registrations, app: app)
        detail("\(uninstalled.count) of them uninstalled the app: APNs (the simulator) answers 410 Unregistered")

        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: stack.cluster.bootstrapServers), logger: logger)
        let worker = try PushWorker(configuration: stack.configuration, roles: Set(WorkerRole.allCases), logger: logger)
        let group = ServiceGroup(services: [worker], logger: logger)
        let jobs = JobStore(client: redis)
        var consistent = true
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                consistent = try await runCampaigns(
                    stack: stack, registry: registry, jobs: jobs, producer: producer, tokens: tokens, uninstalled: uninstalled, logger: logger)
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            say("worker stopped gracefully: \(worker.counters.snapshot().filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
        }
        await producer.close()
        return consistent
    }

    private func runCampaigns(
        stack: EmbeddedStack, registry: DeviceRegistry, jobs: JobStore, producer: KafkaProducer, tokens: [DeviceToken],
        uninstalled: [DeviceToken], logger: Logger
    ) async throws -> Bool {
        let app = EmbeddedStack.app
        var consistent = true
        say("worker started (expand, send, feedback roles) in consumer groups pushfleet.expand/.send/.feedback")

        let uninstalledSet = Set(uninstalled)
        let sportsValid = tokens.enumerated().filter { $0.offset.isMultiple(of: 3) && !uninstalledSet.contains($0.element) }.count
        let openIDs = (0..<5).map { "user-\($0)" } + ["nobody"]
        let campaigns: [(PushJob, expectedAccepted: Int)] = [
            (Self.job("demo-broadcast", .broadcast, "Today's headlines"), tokens.count - uninstalled.count),
            (Self.job("demo-openids", .openIDs(openIDs), "A message for you"), 5 - openIDs.prefix(5).filter { uninstalledSet.contains(tokens[Int($0.dropFirst(5))! * 10]) }.count),
            (Self.job("demo-sports", .tags(TagExpression(all: ["sports"])), "Kick-off in 10 minutes"), sportsValid),
        ]
        say("publishing three campaigns and three malformed jobs to \(PushTopic.jobs)")
        let bad: [(String, [UInt8])] = [
            ("bad-json", Array(#"{"app": "news", "#.utf8)),
            ("bad-priority", Array(#"{"id":"bad-priority","app":"news","environment":"sandbox","audience":{"broadcast":true},"notification":{"aps":{"content-available":1}},"headers":{"push-type":"background","priority":10}}"#.utf8)),
            ("bad-app", Array(Self.job("bad-app", .broadcast, "x", app: "no-such-app").jsonData())),
        ]
        for (job, _) in campaigns {
            _ = try await producer.send(KafkaProducerMessage(topic: PushTopic.jobs, key: job.id, value: job.jsonData()))
        }
        for (key, bytes) in bad {
            _ = try await producer.send(KafkaProducerMessage(topic: PushTopic.jobs, key: Array(key.utf8), value: bytes))
        }

        for (job, expectedAccepted) in campaigns {
            let jobID = job.id ?? ""
            let start = ContinuousClock.now
            var report = JobReport(jobID: jobID, counters: [:])
            while !report.isComplete {
                try await Task.sleep(for: .milliseconds(200))
                report = JobReport(jobID: jobID, counters: try await jobs.statistics(jobID: jobID))
                progress(jobID, report)
                guard ContinuousClock.now - start < .seconds(300) else { throw ValidationError("campaign \(jobID) did not finish in 5 minutes") }
            }
            print("")
            report.lines.forEach { detail($0) }
            if report.accepted != expectedAccepted {
                detail("✗ expected \(expectedAccepted) accepted")
                consistent = false
            }
        }

        // The feedback worker removes the uninstalled devices as their events arrive.
        var count = try await registry.deviceCount(app: app)
        let removalStart = ContinuousClock.now
        while count.sandbox > tokens.count - uninstalled.count && ContinuousClock.now - removalStart < .seconds(60) {
            try await Task.sleep(for: .milliseconds(100))
            count = try await registry.deviceCount(app: app)
        }
        let counters = try await stack.simulator.counters()
        say("checking the simulator, the registry and \(PushTopic.deadLetters)")
        detail("simulator: \(counters.accepted) accepted, \(counters.duplicates) duplicates, \(counters.rejections) refused")
        detail("registry: \(count.sandbox) devices left of \(tokens.count) (\(uninstalled.count) uninstalled removed by the feedback worker)")
        let admin = try KafkaAdmin(bootstrapServers: stack.cluster.bootstrapServers, logger: logger)
        let letters = Int(try await admin.highWatermarks(topic: PushTopic.deadLetters).values.reduce(0, +))
        detail("\(PushTopic.deadLetters): \(letters) dead letters (the three malformed jobs, with their reasons and bytes)")
        return consistent && counters.duplicates == 0 && count.sandbox == tokens.count - uninstalled.count && letters == bad.count
    }

    private static func job(_ id: String, _ audience: Audience, _ title: String, app: String = EmbeddedStack.app) -> PushJob {
        PushJob(
            id: id, app: app, environment: .sandbox, audience: audience,
            notification: APNsPayload(["aps": ["alert": ["title": .string(title), "body": "PushFleet demo"], "sound": "default"]]),
            headers: PushHeaders(pushType: .alert, collapseID: id))
    }

    private func progress(_ jobID: String, _ report: JobReport) {
        let total = max(report.targeted, 1)
        let done = report.finished
        let width = 30
        let filled = min(width, done * width / total)
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let line = "    \(jobID.padding(toLength: 15, withPad: " ", startingAt: 0)) \(bar) \(done)/\(report.targeted) accepted \(report.accepted) failed \(report.failedByReason.values.reduce(0, +)) retried \(report.retried)"
        FileHandle.standardOutput.write(Data(("\r" + line).utf8))
    }

    private func say(_ text: String) { print("▸ \(text)") }
    private func detail(_ text: String) { print("    \(text)") }
}
