import ArgumentParser
import Foundation
import Kafka
import Logging
import PushConfiguration
import PushJobs
import PushStore
import Redis

/// Options of the client commands (`send`, `campaign`, `devices`, `jobs`): the configuration
/// file that names Kafka, Redis and the apps.
struct ClientOptions: ParsableArguments {
    @Option(help: "The configuration file (YAML). Environment variables PUSHFLEET__<KEY>__<KEY> override it.")
    var config: String = "pushfleet.yaml"

    @Flag(help: "Machine-readable output: JSON on stdout.")
    var json = false

    /// The configuration, or a usage error naming the file and the key at fault.
    func loadConfiguration() throws -> PushFleetConfiguration {
        do {
            return try PushFleetConfiguration.load(path: config)
        } catch {
            throw ValidationError("configuration \(config): \(error)")
        }
    }
}

/// The connections a client command uses, closed when it ends.
struct ClientSession {
    let configuration: PushFleetConfiguration
    let redis: any RedisCommands
    let producer: KafkaProducer?
    let logger: Logger

    var registry: DeviceRegistry {
        DeviceRegistry(client: redis, configuration: configuration.registry.registryConfiguration)
    }

    var jobs: JobStore { JobStore(client: redis) }
    var badges: BadgeStore { BadgeStore(client: redis) }

    var publisher: JobPublisher {
        guard let producer else { preconditionFailure("a session without Kafka cannot publish") }
        return JobPublisher(producer: producer, jobs: jobs, idempotency: IdempotencyKeys(client: redis))
    }

    /// Pauses, resumes, cancels, recalls published jobs, or changes their rate.
    var jobOperator: JobOperator {
        guard let producer else { preconditionFailure("a session without Kafka cannot operate on jobs") }
        return JobOperator(producer: producer, jobs: jobs, publisher: publisher)
    }

    /// Opens Redis (and Kafka when `kafka`), runs `body`, and closes them whatever happens.
    static func with<Value>(
        _ options: ClientOptions, kafka: Bool, _ body: (ClientSession) async throws -> Value
    ) async throws -> Value {
        let configuration = try options.loadConfiguration()
        var logger = Logger(label: "pushfleet.client")
        logger.logLevel = .error
        let redis = try configuration.redis.makeClient(clientName: "pushfleet-cli", logger: logger)
        let producer: KafkaProducer?
        do {
            producer = kafka ? try configuration.kafka.makeProducer(clientID: "pushfleet-cli", logger: logger) : nil
        } catch {
            await redis.shutdown()
            throw error
        }
        let session = ClientSession(configuration: configuration, redis: redis, producer: producer, logger: logger)
        let result: Result<Value, any Error>
        do {
            result = .success(try await body(session))
        } catch {
            result = .failure(error)
        }
        await producer?.close()
        await redis.shutdown()
        return try result.get()
    }

    /// Opens Redis (the registry commands: no Kafka), runs `body` once `app` is known to be
    /// configured, and closes Redis whatever happens.
    static func withRegistry<Value>(
        _ options: ClientOptions, app: String, _ body: (ClientSession) async throws -> Value
    ) async throws -> Value {
        try await with(options, kafka: false) { session in
            _ = try session.app(app)
            return try await body(session)
        }
    }

    /// The configured app, or a usage error listing the apps.
    func app(_ id: String) throws -> AppSettings {
        guard let app = configuration.apps[id] else {
            throw ValidationError("unknown app '\(id)'; configured apps: \(configuration.apps.keys.sorted().joined(separator: ", "))")
        }
        return app
    }
}

/// Writes to stderr (progress, warnings) so stdout stays for results.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
