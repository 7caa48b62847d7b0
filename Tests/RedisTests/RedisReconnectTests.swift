import LocalRedis
import Redis
import Testing

@Suite("Reconnecting after the server went away")
struct RedisReconnectTests {
    @Test func theNextCommandAfterARestartSucceeds() async throws {
        try await LocalRedisServer.with { server in
            let connection = try await RedisConnection.connect(configuration: server.configuration.fastFailing())
            #expect(try await connection.send("SET", "before", "restart") == .status("OK"))

            try await server.restart()

            #expect(try await connection.send("PING") == .status("PONG"))
            #expect(try await connection.send("GET", "before") == .null)
            #expect(try await connection.send("INCR", "after") == .integer(1))
        }
    }

    @Test func aStoppedServerIsAClearErrorWithinTheBackoffBudget() async throws {
        let server = try await LocalRedisServer.start()
        let configuration = server.configuration.fastFailing()
        let connection = try await RedisConnection.connect(configuration: configuration)
        #expect(try await connection.send("PING") == .status("PONG"))

        await server.stop()

        let clock = ContinuousClock()
        let start = clock.now
        let error = await redisError { try await connection.send("PING") }
        let elapsed = clock.now - start
        #expect(error?.code == .connectionFailed)
        #expect(error?.isRetryable == true)
        #expect(error?.message.contains("127.0.0.1:\(server.port)") == true)
        #expect(error?.message.contains("3 attempt") == true)
        // Backoff 20 ms + 40 ms; refused connects return at once. The upper bound only says it
        // gave up (the three attempts are in the message), with room for a loaded machine.
        #expect(elapsed >= .milliseconds(60))
        #expect(elapsed < .seconds(20))

        let connectError = await redisError { try await RedisConnection.connect(configuration: configuration) }
        #expect(connectError?.code == .connectionFailed)
    }
}
