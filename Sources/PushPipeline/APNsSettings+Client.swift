public import APNs
public import PushConfiguration

extension APNsSettings {
    /// The APNs client configuration: Apple's hosts on `port`, or the configured endpoint,
    /// trusting the system's roots or the CA file.
    /// Each pool sizes itself between ``minConnectionsPerPool`` and `connectionsPerPool`.
    public func clientConfiguration(connectionsPerPool: Int) -> APNsClientConfiguration {
        var configuration = APNsClientConfiguration(
            applePort: port,
            endpointOverride: endpoint.map { APNsClientConfiguration.Endpoint(host: $0.host, port: $0.port) },
            environmentEndpoints: endpoints.mapValues { APNsClientConfiguration.Endpoint(host: $0.host, port: $0.port) },
            trustRoots: caFile.map { .pemFile($0) } ?? .system,
            connectionsPerPool: connectionsPerPool,
            maxConcurrentStreamsPerConnection: streamsPerConnection,
            requestTimeout: requestTimeout)
        configuration.binaryGatewayEndpoints = binaryEndpoints.mapValues { APNsClientConfiguration.Endpoint(host: $0.host, port: $0.port) }
        configuration.feedbackServiceEndpoints = feedbackEndpoints.mapValues { APNsClientConfiguration.Endpoint(host: $0.host, port: $0.port) }
        configuration.binaryQuietPeriod = binaryQuietPeriod
        configuration.minimumConnectionsPerPool = min(minConnectionsPerPool, connectionsPerPool)
        return configuration
    }
}
