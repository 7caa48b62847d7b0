import APNsCore
import APNsSimulator
import ArgumentParser
import EmbeddedKafka
import EmbeddedStack
import Foundation
import Kafka
import Logging
import PushAPI
import PushConfiguration
import PushCore
import PushJobs
import PushPipeline
import PushStore
import Redis
import ServiceLifecycle
import UnixSignals

/// `pushfleet demo`: the whole pipeline on the embedded stack — librdkafka's mock cluster, a
/// local `redis-server`, the APNs simulator over HTTP/2 + TLS — with a worker (expand, send) and
/// the feedback worker and the HTTP API in this process. It registers demo devices (some of them
/// uninstalled at the simulator), runs a broadcast, an openid and a tag campaign through the API
/// (with an idempotent replay and a refused job) plus three malformed jobs straight to Kafka,
/// shows progress, posts device receipts, prints each campaign's statistics, then sends a
/// misconfigured campaign (a topic none of the devices belongs to) that the circuit breaker
/// pauses and the demo aborts, and checks everything against the simulator, the registry and the
/// dead-letter topic: exit 1 if anything disagrees.
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

    @Flag(help: "After the campaigns, keep the stack and the API up (printing how to call it) until SIGINT or SIGTERM.")
    var serve = false

    @Option(help: "The API's (and the console's) port with --serve; 0 lets the system choose.")
    var port = 0

    @Flag(help: "Keep the state on a local Redis Cluster (3 masters, 3 replicas) instead of one redis-server.")
    var redisCluster = false

    @Flag(
        help:
            "Start the embedded stack and register the demo devices, print its configuration file, and wait for SIGINT or SIGTERM: the workers, the feedback worker and the API run as processes of their own (`pushfleet worker --config FILE`, …)."
    )
    var stackOnly = false

    @Option(
        help:
            "App news authenticates with a sandbox client certificate valid for this many days instead of a signing key, so that /metrics and /readyz show their expiry."
    )
    var certificateDays: Int?

    func validate() throws {
        guard devices >= 100 else { throw ValidationError("--devices must be at least 100") }
        if let certificateDays, !(1...3650).contains(certificateDays) {
            throw ValidationError("--certificate-days must be from 1 to 3650")
        }
        guard !(stackOnly && serve) else {
            throw ValidationError("--stack-only runs no campaign to serve after: use one of --stack-only and --serve")
        }
        guard uninstalledEvery >= 2 else { throw ValidationError("--uninstalled-every must be at least 2") }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
    }

    func run() async throws {
        var logger = Logger(label: "pushfleet.demo")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .error
        let tokens = (0..<devices).map(Self.token)
        let uninstalled = stride(from: 0, to: devices, by: uninstalledEvery).map { tokens[$0] }

        say(
            "starting the embedded stack: Kafka (mock cluster), \(redisCluster ? "a Redis Cluster (3 masters, 3 replicas)" : "redis-server"), APNs simulator (HTTP/2 + TLS)"
        )
        var options = EmbeddedStack.Options()
        options.apiPort = port
        // The shop's topic is one news's jobs may address, but every demo device is news's own.
        options.appSettings = ["extra-topics: [\(EmbeddedStack.otherBundleID)]"]
        // A demo's campaigns are small: the breaker judges after 50 answers (200 by default).
        options.breakerSettings = ["min-notifications: 50"]
        if redisCluster {
            options.redisClusterMasters = 3
        }
        if let certificateDays {
            options.certificates = [.sandbox: .seconds(certificateDays * 86_400)]
        }
        let stack = try await EmbeddedStack.start(options, logger: logger) { simulator in
            simulator.devices.unregistered = Dictionary(uniqueKeysWithValues: uninstalled.map { ($0.hex, 1) })
            simulator.devices.topics = Dictionary(uniqueKeysWithValues: tokens.map { ($0.hex, EmbeddedStack.bundleID) })
        }
        detail("kafka \(stack.kafka.bootstrapServers) · redis \(stack.redisDescription) · simulator 127.0.0.1:\(stack.simulator.port)")
        detail("configuration \(stack.configurationPath)")
        let redis = stack.makeRedisClient(logger: logger)
        let outcome: Result<Bool, any Error>
        do {
            if stackOnly {
                try await serveStack(stack, redis: redis, tokens: tokens)
                outcome = .success(true)
            } else {
                outcome = .success(try await demo(stack: stack, redis: redis, tokens: tokens, uninstalled: uninstalled, logger: logger))
            }
        } catch {
            outcome = .failure(error)
        }
        await redis.shutdown()
        await stack.stop()
        guard try outcome.get() else {
            print("✗ the figures disagree with what the simulator, Redis and Kafka hold")
            throw ExitCode.failure
        }
        guard !stackOnly else { return }
        print(
            "✓ every notification has its outcome: accepted once, uninstalled devices removed, bad jobs dead-lettered, the misconfigured campaign stopped with the registry untouched"
        )
    }

    static func token(_ n: Int) -> DeviceToken {
        try! DeviceToken(hex: String(repeating: "de", count: 24) + String(format: "%016x", n))
    }

    /// `--stack-only`: registers the demo devices, prints a machine-readable line for scripts
    /// (the observability tests start the processes and Prometheus against it), and waits for
    /// SIGINT or SIGTERM.
    private func serveStack(_ stack: EmbeddedStack, redis: any RedisCommands, tokens: [DeviceToken]) async throws {
        let registry = DeviceRegistry(
            client: redis, configuration: stack.configuration.registry.registryConfiguration)
        try await register(tokens, in: registry)
        say("serving the stack until Ctrl-C (SIGINT) or SIGTERM; start its processes with --config \(stack.configurationPath)")
        print(
            "PUSHFLEET_STACK config=\(stack.configurationPath) app=\(EmbeddedStack.app) key=\(stack.apiKeys[EmbeddedStack.app] ?? "")"
                + " device-key=\(stack.deviceAPIKey) other-topic=\(EmbeddedStack.otherBundleID) devices=\(tokens.count) uninstalled-every=\(uninstalledEvery)"
        )
        fflush(nil)
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        for await _ in signals {
            break
        }
    }

    /// Registers the demo devices: every 3rd tagged `sports`, every 10th logged in as a user.
    private func register(_ tokens: [DeviceToken], in registry: DeviceRegistry) async throws {
        say("registering \(tokens.count) devices (every 3rd tagged 'sports', every 10th logged in as a user)")
        let registrations = tokens.enumerated().map { index, token in
            DeviceRegistration(
                token: token, environment: .sandbox, openID: index.isMultiple(of: 10) ? "user-\(index / 10)" : nil,
                tags: index.isMultiple(of: 3) ? ["sports"] : [], registeredAt: 0)
        }
        try await registry.bind(registrations, app: EmbeddedStack.app)
    }

    private func demo(stack: EmbeddedStack, redis: any RedisCommands, tokens: [DeviceToken], uninstalled: [DeviceToken], logger: Logger) async throws
        -> Bool
    {
        let app = EmbeddedStack.app
        let registry = DeviceRegistry(
            client: redis, configuration: stack.configuration.registry.registryConfiguration)
        try await register(tokens, in: registry)
        detail("\(uninstalled.count) of them uninstalled the app: APNs (the simulator) answers 410 Unregistered")

        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: stack.kafka.bootstrapServers), logger: logger)
        let worker = try PushWorker(configuration: stack.configuration, roles: Set(WorkerRole.allCases), logger: logger)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let api = PushAPIServer(configuration: stack.configuration, logger: logger) { port in
            portContinuation.yield(port)
            portContinuation.finish()
        }
        let group = ServiceGroup(services: [worker, api], logger: logger)
        let jobs = JobStore(client: redis)
        var consistent = true
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                var portIterator = ports.makeAsyncIterator()
                guard let port = await portIterator.next() else { throw ValidationError("the API did not start") }
                let client = PushAPIClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, apiKey: stack.apiKeys[app])
                say("worker started (expand, send, feedback roles) in consumer groups pushfleet.expand/.send/.feedback")
                say("API listening on http://127.0.0.1:\(port)")
                consistent = try await runCampaigns(
                    stack: stack, registry: registry, jobs: jobs, producer: producer, client: client, tokens: tokens,
                    uninstalled: uninstalled, logger: logger)
                if serve {
                    try await waitForSignal(port: port, stack: stack)
                }
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            say(
                "worker and API stopped gracefully: \(worker.counters.snapshot().filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
            )
        }
        await producer.close()
        return consistent
    }

    /// `--serve`: says how to call the API (and prints a machine-readable line for scripts),
    /// then waits for SIGINT or SIGTERM.
    private func waitForSignal(port: Int, stack: EmbeddedStack) async throws {
        let url = "http://127.0.0.1:\(port)"
        let app = EmbeddedStack.app
        let key = stack.apiKeys[app] ?? ""
        say("the campaign console: \(url)/console/ (sign in with app \(app) and API key \(key))")
        say("serving until Ctrl-C (SIGINT) or SIGTERM; or call the API, e.g.:")
        detail("curl -s \(url)/readyz")
        detail("curl -s -H 'Authorization: Bearer \(key)' \(url)/v1/apps/\(app)/devices")
        detail(
            "curl -s -H 'Authorization: Bearer \(key)' -H 'Content-Type: application/json' -d '{\"environment\":\"sandbox\",\"audience\":{\"broadcast\":true},\"notification\":{\"aps\":{\"alert\":\"Hello\"}},\"headers\":{\"push-type\":\"alert\"}}' \(url)/v1/apps/\(app)/push"
        )
        detail("configuration: \(stack.configurationPath) · OpenAPI: schemas/openapi.yaml")
        print(
            "PUSHFLEET_API url=\(url) app=\(app) key=\(key) other-app=\(EmbeddedStack.otherApp) other-key=\(stack.apiKeys[EmbeddedStack.otherApp] ?? "") device-key=\(stack.deviceAPIKey) console=\(url)/console/"
        )
        fflush(nil)
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        for await _ in signals {
            break
        }
    }

    private func runCampaigns(
        stack: EmbeddedStack, registry: DeviceRegistry, jobs: JobStore, producer: KafkaProducer, client: PushAPIClient,
        tokens: [DeviceToken], uninstalled: [DeviceToken], logger: Logger
    ) async throws -> Bool {
        let app = EmbeddedStack.app
        var consistent = true

        let uninstalledSet = Set(uninstalled)
        let sportsValid = tokens.enumerated().filter { $0.offset.isMultiple(of: 3) && !uninstalledSet.contains($0.element) }.count
        let openIDs = (0..<5).map { "user-\($0)" } + ["nobody"]
        let campaigns: [(label: String, job: PushJob, expectedAccepted: Int)] = [
            ("broadcast", Self.job(.broadcast, "Today's headlines"), tokens.count - uninstalled.count),
            (
                "openids", Self.job(.openIDs(openIDs), "A message for you"),
                5 - openIDs.prefix(5).filter { uninstalledSet.contains(tokens[Int($0.dropFirst(5))! * 10]) }.count
            ),
            ("sports", Self.job(.tags(TagExpression(all: ["sports"])), "Kick-off in 10 minutes"), sportsValid),
        ]
        say("publishing three campaigns through the API (POST /v1/apps/\(app)/push, each with an Idempotency-Key)")
        var published: [(label: String, jobID: String, expectedAccepted: Int)] = []
        for (label, job, expected) in campaigns {
            let answer = try await client.request(
                "POST", "/v1/apps/\(app)/push", rawBody: job.jsonData(),
                headers: ["Content-Type": "application/json", "Idempotency-Key": "demo-\(label)"])
            guard answer.status == 202, let jobID = answer.json?.objectValue?["job"]?.stringValue else {
                throw ValidationError("the API refused the \(label) campaign: \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
            }
            detail("202 \(label): job \(jobID)")
            published.append((label, jobID, expected))
        }
        let replay = try await client.request(
            "POST", "/v1/apps/\(app)/push", rawBody: campaigns[0].job.jsonData(),
            headers: ["Content-Type": "application/json", "Idempotency-Key": "demo-broadcast"])
        let replayedID = replay.json?.objectValue?["job"]?.stringValue
        detail("the broadcast again with the same Idempotency-Key: \(replay.status), job \(replayedID ?? "?") (replayed, not published twice)")
        if replayedID != published[0].jobID {
            detail("✗ expected the first job's id")
            consistent = false
        }
        var tooLong = campaigns[0].job
        tooLong.headers.collapseID = String(repeating: "x", count: 65)
        let refused = try await client.request(
            "POST", "/v1/apps/\(app)/push", rawBody: tooLong.jsonData(), headers: ["Content-Type": "application/json"])
        detail("a job with a 65-byte collapse-id: \(refused.status) \(String(decoding: refused.body, as: UTF8.self))")

        say("publishing three malformed jobs straight to \(PushTopic.jobs) (the workers dead-letter them)")
        let bad: [(String, [UInt8])] = [
            ("bad-json", Array(#"{"app": "news", "#.utf8)),
            (
                "bad-priority",
                Array(
                    #"{"id":"bad-priority","app":"news","environment":"sandbox","audience":{"broadcast":true},"notification":{"aps":{"content-available":1}},"headers":{"push-type":"background","priority":10}}"#
                        .utf8)
            ),
            ("bad-app", Array(Self.job(.broadcast, "x", app: "no-such-app", id: "bad-app").jsonData())),
        ]
        for (key, bytes) in bad {
            _ = try await producer.send(KafkaProducerMessage(topic: PushTopic.jobs, key: Array(key.utf8), value: bytes))
        }

        var acceptedTotal = 0
        for (label, jobID, expectedAccepted) in published {
            let follower = JobFollower(jobs: jobs, timeout: .seconds(300))
            let (_, end) = try await follower.follow(jobID: jobID, label: label.padding(toLength: 10, withPad: " ", startingAt: 0))
            guard end == .complete else { throw ValidationError("campaign \(label) did not finish in 5 minutes") }
            let status = try await client.request("GET", "/v1/apps/\(app)/jobs/\(jobID)")
            let report = JobReport(jobID: jobID, counters: try await jobs.statistics(jobID: jobID))
            report.lines.forEach { detail($0) }
            let apiAccepted = status.json?.objectValue?["accepted"]?.intValue
            if report.accepted != expectedAccepted || apiAccepted != report.accepted {
                detail("✗ expected \(expectedAccepted) accepted (the API says \(apiAccepted.map(String.init) ?? "?"))")
                consistent = false
            }
            acceptedTotal += report.accepted
        }

        // Devices report receipts: their notification service extension posts "delivered",
        // and "opened" when the user taps; each device counts once.
        let broadcastID = published[0].jobID
        let reporting = tokens.filter { !uninstalledSet.contains($0) }.prefix(100)
        for (index, token) in reporting.enumerated() {
            for event in index < 10 ? ["delivered", "opened", "delivered"] : ["delivered"] {
                _ = try await client.request(
                    "POST", "/v1/apps/\(app)/receipts", json: ["job": .string(broadcastID), "token": .string(token.hex), "event": .string(event)])
            }
        }
        let receipts = try await client.request("GET", "/v1/apps/\(app)/jobs/\(broadcastID)")
        let delivered = receipts.json?.objectValue?["delivered"]?.intValue ?? -1
        let opened = receipts.json?.objectValue?["opened"]?.intValue ?? -1
        say("receipts: \(reporting.count) devices reported the broadcast delivered (10 of them twice), 10 opened it")
        detail("GET /v1/apps/\(app)/jobs/\(broadcastID): delivered \(delivered), opened \(opened)")
        if delivered != reporting.count || opened != 10 {
            detail("✗ expected delivered \(reporting.count), opened 10")
            consistent = false
        }

        consistent = try await runMisconfiguredCampaign(client: client, jobs: jobs, registry: registry) && consistent

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
        detail("statistics: \(acceptedTotal) accepted over the three campaigns")
        detail("registry: \(count.sandbox) devices left of \(tokens.count) (\(uninstalled.count) uninstalled removed by the feedback worker)")
        let admin = try KafkaAdmin(bootstrapServers: stack.kafka.bootstrapServers, logger: logger)
        let letters = Int(try await admin.highWatermarks(topic: PushTopic.deadLetters).values.reduce(0, +))
        detail("\(PushTopic.deadLetters): \(letters) dead letters (the three malformed jobs, with their reasons and bytes)")
        return consistent && counters.duplicates == 0 && counters.accepted == acceptedTotal
            && count.sandbox == tokens.count - uninstalled.count && letters == bad.count
    }

    /// A broadcast to a topic none of the devices belongs to: APNs answers
    /// DeviceTokenNotForTopic for each; the circuit breaker pauses it after its first answers,
    /// nothing changes in the registry, and the demo aborts it.
    /// (The final check, that exactly the uninstalled devices left the registry, covers it too.)
    private func runMisconfiguredCampaign(client: PushAPIClient, jobs: JobStore, registry: DeviceRegistry) async throws -> Bool {
        let app = EmbeddedStack.app
        say("a misconfigured campaign: a broadcast to \(EmbeddedStack.otherBundleID), a topic none of the devices belongs to")
        var job = Self.job(.broadcast, "Sent to the wrong topic")
        job.headers.topic = EmbeddedStack.otherBundleID
        let answer = try await client.request("POST", "/v1/apps/\(app)/push", rawBody: job.jsonData(), headers: ["Content-Type": "application/json"])
        guard answer.status == 202, let jobID = answer.json?.objectValue?["job"]?.stringValue else {
            throw ValidationError("the API refused the misconfigured campaign: \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        }
        let follower = JobFollower(jobs: jobs, timeout: .seconds(120), showProgress: false)
        let (report, end) = try await follower.follow(jobID: jobID, label: "wrong topic")
        guard end == .paused else { throw ValidationError("the misconfigured campaign was not paused (\(end))") }
        detail(
            "paused by the \(report.control.pausedBy?.rawValue ?? "?") after \(report.sent) answers of \(report.targeted) devices: \(report.control.reason ?? "")"
        )
        let count = try await registry.deviceCount(app: app)
        detail("registry: \(count.suspect) devices kept aside, none removed for this campaign")
        let aborted = try await client.request("POST", "/v1/apps/\(app)/jobs/\(jobID)/abort", json: ["reason": "wrong topic"])
        let state = aborted.json?.objectValue?["state"]?.stringValue
        detail("POST /v1/apps/\(app)/jobs/\(jobID)/abort: \(aborted.status), state \(state ?? "?")")
        let consistent = count.suspect == 0 && state == "cancelled"
        if !consistent { detail("✗ expected the registry untouched and the campaign aborted") }
        return consistent
    }

    private static func job(_ audience: Audience, _ title: String, app: String = EmbeddedStack.app, id: String? = nil) -> PushJob {
        PushJob(
            id: id, app: app, environment: .sandbox, audience: audience,
            notification: APNsPayload(["aps": ["alert": ["title": .string(title), "body": "PushFleet demo"], "sound": "default"]]),
            headers: PushHeaders(pushType: .alert))
    }

    private func say(_ text: String) { print("▸ \(text)") }
    private func detail(_ text: String) { print("    \(text)") }
}
