public import Logging
public import PushConfiguration
import PushStore
public import Redis

extension RedisSettings {
    /// The Redis client configuration these settings describe, with the password read from
    /// its file when one is named.
    ///
    /// - Throws: ``ConfigurationError`` naming `redis.password-file` when it cannot be read.
    public func redisConfiguration(clientName: String = "pushfleet") throws(ConfigurationError) -> RedisConfiguration {
        RedisConfiguration(
            host: host, port: port, username: username, password: try resolvedPassword(), database: database,
            clientName: clientName, poolSize: poolSize)
    }
}

extension RedisSettings {
    /// The client these settings describe: a ``RedisClusterClient`` over `cluster-nodes` when
    /// they are set, else one server's ``RedisClient``.
    ///
    /// - Throws: ``ConfigurationError`` naming `redis.password-file` when it cannot be read.
    public func makeClient(clientName: String, logger: Logger) throws(ConfigurationError) -> any RedisCommands {
        let node = try redisConfiguration(clientName: clientName)
        let seeds = clusterNodes.compactMap { RedisClusterTopology.Address($0) }
        guard !seeds.isEmpty else { return RedisClient(configuration: node, logger: logger) }
        return RedisClusterClient(
            configuration: RedisClusterConfiguration(
                seeds: seeds, node: node, replicaAcknowledgements: replicaAcknowledgements,
                replicaAcknowledgementTimeout: replicaAcknowledgementTimeout),
            logger: logger)
    }
}

extension ResendSettings {
    /// The resend buffer's policy.
    package var policy: ResendPolicy {
        ResendPolicy(maxAttempts: maxAttempts, baseDelay: baseDelay, maxDelay: maxDelay, maxAge: maxAge, lease: lease)
    }
}
