import Redis
import Testing

extension RedisConfiguration {
    /// Small timeouts and backoff so that failure paths finish quickly in tests.
    func fastFailing() -> RedisConfiguration {
        var configuration = self
        configuration.connectTimeout = .seconds(1)
        configuration.commandTimeout = .seconds(5)
        configuration.reconnect = .init(maxAttempts: 3, initialDelay: .milliseconds(20), maxDelay: .milliseconds(100))
        return configuration
    }
}

/// Evaluates `expression` and returns the ``RedisClientError`` it throws; records an issue and
/// returns `nil` if it succeeds or throws something else.
func redisError<Value>(
    _ expression: () async throws -> Value,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> RedisClientError? {
    do {
        let value = try await expression()
        Issue.record("expected a RedisClientError, got \(value)", sourceLocation: sourceLocation)
    } catch let error as RedisClientError {
        return error
    } catch {
        Issue.record("expected a RedisClientError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
