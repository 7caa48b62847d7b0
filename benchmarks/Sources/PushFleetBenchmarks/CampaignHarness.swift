import APNsCore
import EmbeddedKafka
import EmbeddedStack
import Foundation
import Kafka
import Logging
import PushConfiguration
import PushCore
import PushJobs
import PushStore
import Redis

/// What the suites that run campaigns through `pushfleet worker` processes on an embedded stack
/// share (the fault suite, the soak): clients that are closed however the run ends, the device
/// registration, the warm-up and publishing a job.
enum CampaignHarness {
    /// Runs `body` with a producer and a Redis client of `stack`; afterwards (or when it throws,
    /// with every worker stopped first) closes them and stops the stack.
    static func withClients<Value>(
        stack: EmbeddedStack, fleet: WorkerFleet, logger: Logger,
        _ body: (KafkaProducer, any RedisCommands) async throws -> Value
    ) async throws -> Value {
        let redis = stack.makeRedisClient(logger: logger)
        let producer: KafkaProducer
        do {
            producer = try KafkaProducer(
                configuration: KafkaProducerConfiguration(bootstrapServers: stack.kafka.bootstrapServers), logger: logger)
        } catch {
            await redis.shutdown()
            await stack.stop()
            throw error
        }
        do {
            let value = try await body(producer, redis)
            await producer.close()
            await redis.shutdown()
            await stack.stop()
            return value
        } catch {
            fleet.stopAll()
            await producer.close()
            await redis.shutdown()
            await stack.stop()
            throw error
        }
    }

    /// The token of device `n`.
    static func token(_ n: Int) -> DeviceToken {
        try! DeviceToken(hex: String(repeating: "fa", count: 24) + String(format: "%016x", n))
    }

    /// A registry over `redis` that lays a new app out in `shards`, as the stack's workers do
    /// (with the default configuration, the first bind would store 16 shards whatever the stack
    /// says, and buckets would outgrow their compact encoding).
    static func registry(_ redis: any RedisCommands, shards: Int) -> DeviceRegistry {
        DeviceRegistry(client: redis, configuration: DeviceRegistryConfiguration(defaultShardCount: shards))
    }

    /// Registers the tokens of devices `0..<count` (sandbox) for the stack's app, 50,000 per call,
    /// laying a new app out in `shards`.
    static func register(_ count: Int, shards: Int, redis: any RedisCommands) async throws {
        let registry = Self.registry(redis, shards: shards)
        for start in stride(from: 0, to: count, by: 50_000) {
            let batch = (start..<min(start + 50_000, count)).map {
                DeviceRegistration(token: token($0), environment: .sandbox, openID: nil, tags: [], registeredAt: nil)
            }
            try await registry.bind(batch, app: EmbeddedStack.app)
        }
    }

    /// Registers devices `0..<devices`, starts one worker, and returns once it has joined its
    /// groups and sent the warm-up job. The caller stops the fleet.
    static func startOneWorker(
        registering devices: Int, stack: EmbeddedStack, fleet: WorkerFleet, producer: KafkaProducer, redis: any RedisCommands
    ) async throws {
        try await register(devices, shards: stack.options.registryShards, redis: redis)
        try fleet.start(1)
        try await fleet.awaitSettled(groupPartitions(stack))
        try await warmUp(producer: producer, redis: redis)
    }

    /// A job to device 0, waited for until it is accepted: every worker has joined its groups
    /// and connected.
    static func warmUp(producer: KafkaProducer, redis: any RedisCommands) async throws {
        try await publish(
            PushJob(
                id: "warm-up", app: EmbeddedStack.app, environment: .sandbox, audience: .tokens([token(0)]),
                notification: APNsPayload(["aps": ["alert": "warm-up"]]), headers: PushHeaders(pushType: .alert)),
            producer: producer)
        let jobs = JobStore(client: redis)
        while (try await jobs.statistics(jobID: "warm-up")["accepted"] ?? 0) < 1 {
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// The worker consumer groups of `stack` and their topics' partition counts, for
    /// ``WorkerFleet/awaitSettled(_:timeout:)``.
    static func groupPartitions(_ stack: EmbeddedStack) -> WorkerGroups {
        groupPartitions(
            prefix: stack.configuration.kafka.groupPrefix, jobs: Int(stack.options.jobPartitions),
            deliveries: Int(stack.options.deliveryPartitions))
    }

    /// The worker consumer groups under `prefix` and their topics' partition counts.
    static func groupPartitions(prefix: String, jobs: Int, deliveries: Int) -> WorkerGroups {
        WorkerGroups(prefix: prefix, jobPartitions: jobs, deliveryPartitions: deliveries, feedbackPartitions: EmbeddedStack.feedbackPartitions)
    }

    static func publish(_ job: PushJob, producer: KafkaProducer) async throws {
        _ = try await producer.send(KafkaProducerMessage(topic: PushTopic.jobs, key: job.id, value: job.jsonData()))
    }
}

extension EmbeddedStack {
    /// A registry over `redis` that lays out a new app in the stack's shard count
    /// (``CampaignHarness/registry(_:shards:)``).
    func makeRegistry(_ redis: any RedisCommands) -> DeviceRegistry {
        CampaignHarness.registry(redis, shards: options.registryShards)
    }
}
