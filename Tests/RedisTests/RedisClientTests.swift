import LocalRedis
import Testing

@testable import Redis

@Suite("RedisClient: the connection pool")
struct RedisClientTests {
    @Test func fiftyConcurrentTasksShareFourConnections() async throws {
        try await LocalRedisServer.with { server in
            var configuration = server.configuration
            configuration.poolSize = 4
            configuration.clientName = "pool-under-test"
            let client = RedisClient(configuration: configuration)
            let gauge = ConcurrencyGauge()

            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<50 {
                    group.addTask {
                        try await client.withConnection { connection in
                            gauge.enter()
                            defer { gauge.leave() }
                            _ = try await connection.send("INCR", "counter")
                            _ = try await connection.send("SADD", "tasks", .integer(task))
                        }
                    }
                }
                try await group.waitForAll()
            }

            #expect(try await client.send("GET", "counter").int == 50)
            #expect(try await client.send("SCARD", "tasks") == .integer(50))
            #expect(gauge.peak >= 1 && gauge.peak <= 4)
            #expect(client.connectionCount <= 4)

            let observer = try await RedisConnection.connect(configuration: server.configuration)
            let clients = try await observer.send("CLIENT", "LIST").string ?? ""
            let pooled = clients.split(separator: "\n").filter { $0.contains(" name=pool-under-test ") }
            #expect(pooled.count == client.connectionCount)
            #expect(pooled.count <= 4)
            await client.shutdown()
        }
    }

    @Test func aCallerWaitsUntilAConnectionIsReleased() async throws {
        try await LocalRedisServer.with { server in
            var configuration = server.configuration
            configuration.poolSize = 1
            let client = RedisClient(configuration: configuration)
            let (released, release) = AsyncStream<Void>.makeStream()

            let holder = Task {
                try await client.withConnection { connection in
                    _ = try await connection.send("SET", "holder", "1")
                    for await _ in released {}
                }
            }
            try await waitUntil { client.connectionCount == 1 }
            let waiter = Task { try await client.send("GET", "holder") }
            try await waitUntil { client.waiterCount == 1 }
            #expect(client.connectionCount == 1)

            release.finish()
            try await holder.value
            #expect(try await waiter.value.string == "1")
            #expect(client.waiterCount == 0)
            #expect(client.connectionCount == 1)
            await client.shutdown()
        }
    }

    @Test func aCancelledWaiterLeavesTheQueue() async throws {
        try await LocalRedisServer.with { server in
            let held = try await holdTheOnlyConnection(of: server)
            held.waiter.cancel()
            await #expect(throws: CancellationError.self) { try await held.waiter.value }
            #expect(held.client.waiterCount == 0)

            held.release.finish()
            try await held.holder.value
            #expect(try await held.client.send("PING") == .status("PONG"))
            await held.client.shutdown()
        }
    }

    @Test func shutdownFailsWaitersAndLaterCalls() async throws {
        try await LocalRedisServer.with { server in
            let held = try await holdTheOnlyConnection(of: server)
            let client = held.client
            let waiter = held.waiter
            let release = held.release
            let holder = held.holder

            await client.shutdown()
            let waiterError = await redisError { try await waiter.value }
            #expect(waiterError?.code == .clientShutdown)
            release.finish()
            try await holder.value
            #expect(client.connectionCount == 0)
            let laterError = await redisError { try await client.send("PING") }
            #expect(laterError?.code == .clientShutdown)
        }
    }

    @Test func waitersAreNotStrandedWhenConnectionsCannotOpen() async throws {
        let server = try await LocalRedisServer.start()
        await server.stop()
        var configuration = server.configuration.fastFailing()
        configuration.poolSize = 1
        configuration.reconnect = .init(maxAttempts: 1)
        let client = RedisClient(configuration: configuration)

        let codes = try await withThrowingTaskGroup(of: RedisClientError.Code?.self) { group in
            for _ in 0..<5 {
                group.addTask { await redisError { try await client.send("PING") }?.code }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(codes == Array(repeating: .connectionFailed, count: 5))
        #expect(client.connectionCount == 0)
    }

    @Test func scriptsAndPipelinesPassThrough() async throws {
        try await LocalRedisServer.with { server in
            let client = RedisClient(configuration: server.configuration)
            let script = RedisScript("return redis.call('SADD', KEYS[1], unpack(ARGV))")
            #expect(try await client.evalScript(script, keys: ["tags"], arguments: ["a", "b", "c"]) == .integer(3))
            let replies = try await client.pipeline([["SCARD", "tags"], ["SISMEMBER", "tags", "b"]])
            #expect(replies == [.integer(3), .integer(1)])
            await client.shutdown()
        }
    }

    /// A pool of one whose connection a task holds until `release` finishes, and a second
    /// caller (`waiter`, sending PING) queued behind it.
    private struct HeldPool {
        let client: RedisClient
        let release: AsyncStream<Void>.Continuation
        let holder: Task<Void, any Error>
        let waiter: Task<RedisReply, any Error>
    }

    private func holdTheOnlyConnection(of server: LocalRedisServer) async throws -> HeldPool {
        var configuration = server.configuration
        configuration.poolSize = 1
        let client = RedisClient(configuration: configuration)
        let (released, release) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await client.withConnection { _ in
                for await _ in released {}
            }
        }
        try await waitUntil { client.connectionCount == 1 }
        let waiter = Task { try await client.send("PING") }
        try await waitUntil { client.waiterCount == 1 }
        return HeldPool(client: client, release: release, holder: holder, waiter: waiter)
    }

    /// Polls `condition` every millisecond, for at most 5 s.
    private func waitUntil(
        _ condition: () -> Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while !condition() {
            guard clock.now < deadline else {
                Issue.record("condition never became true", sourceLocation: sourceLocation)
                return
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}
