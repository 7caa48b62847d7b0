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

/// Polls `CLIENT LIST` until the client is blocked in a command (flag `b`), at most 5 s.
func waitUntilBlocked(clientID: Int64, admin: RedisConnection) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(5)
    while clock.now < deadline {
        let line = try await admin.send("CLIENT", "LIST", "ID", .integer(Int(clientID))).string ?? ""
        if line.split(separator: " ").contains("flags=b") {
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
    Issue.record("client \(clientID) never blocked")
}
