public import APNs
public import PushConfiguration
public import PushStore
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

extension ResendSettings {
    /// The resend buffer's policy.
    public var policy: ResendPolicy {
        ResendPolicy(maxAttempts: maxAttempts, baseDelay: baseDelay, maxDelay: maxDelay, maxAge: maxAge, lease: lease)
    }
}

extension APNsSettings {
    /// The APNs client configuration: Apple's hosts on `port`, or the configured endpoint,
    /// trusting the system's roots or the CA file.
    public func clientConfiguration(connectionsPerPool: Int) -> APNsClientConfiguration {
        APNsClientConfiguration(
            applePort: port,
            endpointOverride: endpoint.map { APNsClientConfiguration.Endpoint(host: $0.host, port: $0.port) },
            environmentEndpoints: endpoints.mapValues { APNsClientConfiguration.Endpoint(host: $0.host, port: $0.port) },
            trustRoots: caFile.map { .pemFile($0) } ?? .system,
            connectionsPerPool: connectionsPerPool,
            maxConcurrentStreamsPerConnection: streamsPerConnection,
            requestTimeout: requestTimeout)
    }
}
