import APNsCore
import APNsSimulator
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
import Testing

/// The embedded stack (``EmbeddedStack``) plus what the tests use to drive and inspect it: a
/// Redis client, the registry, job statistics and a producer.
package struct PipelineStack {
    package static let app = EmbeddedStack.app

    package let stack: EmbeddedStack
    package let redis: any RedisCommands
    package let registry: DeviceRegistry
    package let jobs: JobStore
    package let producer: KafkaProducer
    package let logger: Logger

    package typealias Options = EmbeddedStack.Options

    package var simulator: APNsSimulator { stack.simulator }
    package var cluster: EmbeddedKafkaCluster { stack.cluster }
    package var kafka: LocalKafka { stack.kafka }
    package var configuration: PushFleetConfiguration { stack.configuration }
    package var configurationPath: String { stack.configurationPath }

    /// Runs `body` on a fresh stack; with `productionSimulator`, the app `news` is enabled for
    /// both environments, production answered by a second simulator adjusted by it.
    package static func with<Value>(
        _ options: Options = Options(),
        simulator configureSimulator: (inout APNsSimulatorConfiguration) -> Void = { _ in },
        productionSimulator: ((inout APNsSimulatorConfiguration) -> Void)? = nil,
        logger givenLogger: Logger? = nil,
        _ body: (PipelineStack) async throws -> Value
    ) async throws -> Value {
        var logger = Logger(label: "pushfleet.test")
        logger.logLevel = ProcessInfo.processInfo.environment["PUSHFLEET_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .error
        if let givenLogger { logger = givenLogger }
        // The Kafka of the run: the embedded cluster, or Tansu (`PUSHFLEET_TEST_KAFKA=tansu`).
        var options = options
        options.kafka = LocalKafka.Kind.fromEnvironment()
        let stack = try await EmbeddedStack.start(options, logger: logger, simulator: configureSimulator, productionSimulator: productionSimulator)
        let redis = stack.makeRedisClient(logger: logger)
        let result: Result<Value, any Error>
        do {
            let producer = try KafkaProducer(
                configuration: KafkaProducerConfiguration(bootstrapServers: stack.kafka.bootstrapServers), logger: logger)
            let test = PipelineStack(
                stack: stack, redis: redis,
                registry: DeviceRegistry(
                    client: redis, configuration: DeviceRegistryConfiguration(defaultShardCount: stack.configuration.registry.shards)),
                jobs: JobStore(client: redis), producer: producer, logger: logger)
            do {
                result = .success(try await body(test))
            } catch {
                result = .failure(error)
            }
            await producer.close()
        } catch {
            result = .failure(error)
        }
        await redis.shutdown()
        await stack.stop()
        return try result.get()
    }

    /// A distinct 32-byte token for every `n`.
    package static func token(_ n: Int) -> DeviceToken {
        try! DeviceToken(hex: String(repeating: "ab", count: 24) + String(format: "%016x", n))
    }

    /// Registers `tokens` in `environment` (default the sandbox).
    package func register(_ tokens: [DeviceToken], tags: [String] = [], environment: APNsEnvironment = .sandbox) async throws {
        try await registry.bind(
            tokens.map { DeviceRegistration(token: $0, environment: environment, openID: nil, tags: tags, registeredAt: 1_000) },
            app: Self.app)
    }

    /// A job of the app with an alert payload.
    package static func job(
        id: String, audience: Audience, throttle: ThrottleOverride? = nil, environment: APNsEnvironment = .sandbox,
        topic: String? = nil
    ) -> PushJob {
        PushJob(
            id: id, app: app, environment: environment, audience: audience,
            notification: APNsPayload(["aps": ["alert": "hello"]]), headers: PushHeaders(pushType: .alert, topic: topic),
            throttle: throttle)
    }

    package func publish(_ job: PushJob) async throws {
        try await publish(raw: Array(job.jsonData()), key: job.id)
    }

    package func publish(raw: [UInt8], key: String?) async throws {
        _ = try await producer.send(KafkaProducerMessage(topic: PushTopic.jobs, key: key.map { Array($0.utf8) }, value: raw))
    }

    /// Publishes `chunk` to `push.deliveries` `copies` times in one send, as the expand stage
    /// keys it (so every copy lands on the same partition, next to each other).
    package func publish(_ chunk: DeliveryChunk, copies: Int = 1) async throws {
        let message = KafkaProducerMessage(topic: PushTopic.deliveries, key: Array(chunk.messageKey.utf8), value: Array(chunk.jsonData()))
        _ = try await producer.send(Array(repeating: message, count: copies))
    }

    package func report(_ jobID: String) async throws -> JobReport {
        try await JobReport.load(jobID: jobID, from: jobs)
    }

    /// Runs a worker in this process until `body` returns, then stops it gracefully.
    package func withWorker<Value>(
        roles: Set<WorkerRole> = Set(WorkerRole.allCases),
        counters: WorkerCounters = WorkerCounters(),
        configuration: PushFleetConfiguration? = nil,
        clock: @escaping @Sendable () -> Int64 = StoreClock.system,
        _ body: (WorkerCounters) async throws -> Value
    ) async throws -> Value {
        let worker = try PushWorker(
            configuration: configuration ?? self.configuration, roles: roles, counters: counters, logger: workerLogger, clock: clock)
        return try await run([worker]) { try await body(counters) }
    }

    /// Runs a worker (every role) and the HTTP API in this process until `body` returns, then
    /// stops both gracefully. `body` gets a client of the API holding the app's key.
    package func withAPI<Value>(_ body: (PushAPIClient, WorkerCounters) async throws -> Value) async throws -> Value {
        let counters = WorkerCounters()
        let worker = try PushWorker(configuration: configuration, roles: Set(WorkerRole.allCases), counters: counters, logger: workerLogger)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let api = PushAPIServer(configuration: configuration, logger: workerLogger) { port in
            continuation.yield(port)
            continuation.finish()
        }
        return try await run([worker, api]) {
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            let client = PushAPIClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, apiKey: stack.apiKeys[Self.app])
            return try await body(client, counters)
        }
    }

    /// Publishes `job` (a job's JSON without its app) through the API's `POST …/push`, expects it
    /// taken (202), and waits for its report to complete; then, so that nothing of it can still
    /// arrive, for a marker job (``requestsAfterMarkerJob()``).
    package func publishAndFinish(
        _ job: JSONValue, through api: PushAPIClient, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (job: String, report: JobReport) {
        let published = try await api.request("POST", "/v1/apps/\(Self.app)/push", json: job)
        #expect(published.status == 202, "\(String(decoding: published.body, as: UTF8.self))", sourceLocation: sourceLocation)
        let jobID = try #require(published.json?.objectValue?["job"]?.stringValue, sourceLocation: sourceLocation)
        let report = try await eventually("campaign \(jobID) to finish") {
            try await self.report(jobID)
        } until: {
            $0.isComplete
        }
        _ = try await requestsAfterMarkerJob()
        return (jobID, report)
    }

    private var workerLogger: Logger {
        var workerLogger = logger
        workerLogger[metadataKey: "worker"] = "in-process"
        return workerLogger
    }

    /// Runs `services` in one group while `body` runs, then shuts them down gracefully.
    private func run<Value>(_ services: [any Service], _ body: () async throws -> Value) async throws -> Value {
        let group = ServiceGroup(services: services, logger: workerLogger)
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                let value = try await body()
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return value
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
        }
    }

    /// Reads every message of `topic` from the beginning until `count` arrived.
    package func readTopic(_ topic: String, count: Int, timeout: Duration = .seconds(60)) async throws -> [KafkaConsumerMessage] {
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                bootstrapServers: stack.kafka.bootstrapServers, groupID: "reader-\(UUID().uuidString)", topics: [topic],
                properties: ["fetch.wait.max.ms": "10"]),
            logger: logger)
        var messages: [KafkaConsumerMessage] = []
        let deadline = ContinuousClock.now + timeout
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                try? await Task.sleep(until: deadline)
                await consumer.close()
            }
            for await message in consumer.messages {
                messages.append(message)
                consumer.markProcessed(message)
                if messages.count >= count { break }
            }
            group.cancelAll()
        }
        await consumer.close()
        return messages
    }
}

/// Waits until `condition` holds, checking every 50 ms, or fails the test after `timeout` with
/// `what` and the last observed value.
package func eventually<Observed: Sendable>(
    _ what: String,
    timeout: Duration = .seconds(120),
    observe: () async throws -> Observed,
    until condition: (Observed) -> Bool
) async throws -> Observed {
    let deadline = ContinuousClock.now + timeout
    while true {
        let observed = try await observe()
        if condition(observed) { return observed }
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting for \(what); last observed: \(observed)")
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(50))
    }
}

/// What the simulator saw of a campaign to `tokens`: the tokens it never accepted, and the
/// acceptances beyond each token's first (notifications sent twice), counting only `tokens`.
package func coverage(of tokens: [DeviceToken], _ seen: APNsSimulatorCounters) -> (missed: [DeviceToken], sentTwice: Int) {
    let accepted = tokens.map { seen.acceptedPerToken[$0.hex] ?? 0 }
    return (zip(tokens, accepted).filter { $0.1 == 0 }.map(\.0), accepted.reduce(0) { $0 + max($1 - 1, 0) })
}
