public import Foundation
public import Logging

/// The Kafka a stack, a test or a benchmark runs on: librdkafka's mock cluster in this process
/// (the default), or a real Kafka-protocol broker in a process of its own (``TansuBroker``).
public enum LocalKafka: Sendable {
    case embedded(EmbeddedKafkaCluster)
    case tansu(TansuBroker)

    /// Which one to start.
    public enum Kind: String, Sendable, CaseIterable {
        case embedded
        case tansu

        /// `PUSHFLEET_TEST_KAFKA` (`embedded` or `tansu`); `embedded` when unset.
        public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Kind {
            guard let value = environment["PUSHFLEET_TEST_KAFKA"], !value.isEmpty else { return .embedded }
            guard let kind = Kind(rawValue: value) else {
                preconditionFailure("PUSHFLEET_TEST_KAFKA=\(value): expected one of \(allCases.map(\.rawValue))")
            }
            return kind
        }
    }

    /// Starts a Kafka of this kind. `brokers` counts the embedded cluster's brokers; Tansu runs one.
    public static func start(_ kind: Kind, brokers: Int32 = 1, logger: Logger) async throws -> LocalKafka {
        switch kind {
        case .embedded: .embedded(try EmbeddedKafkaCluster(brokers: brokers, logger: logger))
        case .tansu: .tansu(try await TansuBroker.start(logger: logger))
        }
    }

    public var kind: Kind {
        switch self {
        case .embedded: .embedded
        case .tansu: .tansu
        }
    }

    /// Comma-separated `host:port` of the brokers.
    public var bootstrapServers: String {
        switch self {
        case .embedded(let cluster): cluster.bootstrapServers
        case .tansu(let broker): broker.bootstrapServers
        }
    }

    /// The embedded cluster, whose fault hooks (brokers down, injected errors, latency) only it has.
    public var embeddedCluster: EmbeddedKafkaCluster? {
        if case .embedded(let cluster) = self { return cluster }
        return nil
    }

    /// Creates a topic; on the embedded cluster with `replicationFactor` replicas, on Tansu
    /// (one broker) with one.
    public func createTopic(_ name: String, partitions: Int32, replicationFactor: Int32 = 1) async throws {
        switch self {
        case .embedded(let cluster): try cluster.createTopic(name, partitions: partitions, replicationFactor: replicationFactor)
        case .tansu(let broker): try await broker.createTopic(name, partitions: partitions)
        }
    }

    /// Stops a Tansu broker; the embedded cluster stops when its last reference goes.
    public func stop() async {
        if case .tansu(let broker) = self { await broker.stop() }
    }
}
