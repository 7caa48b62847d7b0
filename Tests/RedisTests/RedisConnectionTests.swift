import LocalRedis
import Redis
import Testing

@Suite("RedisConnection against a real redis-server")
struct RedisConnectionTests {
    @Test func stringsBytesIntegersArraysAndNull() async throws {
        try await LocalRedisServer.with { server in
            let connection = try await RedisConnection.connect(configuration: server.configuration)
            let key: [UInt8] = [0x6B, 0x00, 0x0D, 0x0A, 0xFF]
            let value: [UInt8] = [0x00, 0x0D, 0x0A, 0x24, 0x2A, 0xFE, 0x00]
            #expect(try await connection.send("SET", .bytes(key), .bytes(value)) == .status("OK"))
            #expect(try await connection.send("GET", .bytes(key)) == .bulk(value))
            #expect(try await connection.send("STRLEN", .bytes(key)) == .integer(Int64(value.count)))

            #expect(try await connection.send("SET", "counter", 41) == .status("OK"))
            #expect(try await connection.send("INCR", "counter") == .integer(42))
            #expect(try await connection.send("GET", "counter").int == 42)

            #expect(try await connection.send("RPUSH", "list", "a", "", "ü") == .integer(3))
            let list = try await connection.send("LRANGE", "list", 0, -1)
            #expect(list == .array([.bulk(Array("a".utf8)), .bulk([]), .bulk(Array("ü".utf8))]))
            #expect(list.array?.compactMap(\.string) == ["a", "", "ü"])

            #expect(try await connection.send("GET", "missing") == .null)
            #expect(try await connection.send("LPOP", "missing", 2) == .null)
            await connection.close()
        }
    }

    @Test func serverErrorsThrowWithTheServersMessage() async throws {
        try await LocalRedisServer.with { server in
            let connection = try await RedisConnection.connect(configuration: server.configuration)
            _ = try await connection.send("SET", "text", "x")
            let error = await redisError { try await connection.send("LPUSH", "text", "y") }
            #expect(error?.code == .serverError)
            #expect(error?.message.hasPrefix("WRONGTYPE") == true)
            #expect(error?.isRetryable == false)
            let unknown = await redisError { try await connection.send("NOSUCHCOMMAND") }
            #expect(unknown?.code == .serverError)
            #expect(unknown?.message.contains("unknown command") == true)
            // The connection stays usable after an error reply.
            #expect(try await connection.send("GET", "text").string == "x")
        }
    }

    @Test func pipelineOfTenThousandCommands() async throws {
        try await LocalRedisServer.with { server in
            let connection = try await RedisConnection.connect(configuration: server.configuration)
            let count = 10_000
            let sets: [[RedisArgument]] = (0..<count).map { ["SET", "key:\($0)", "value:\($0)"] }
            let setReplies = try await connection.pipeline(sets)
            #expect(setReplies.count == count)
            #expect(setReplies.allSatisfy { $0 == .status("OK") })

            let gets: [[RedisArgument]] = (0..<count).map { ["GET", "key:\($0)"] }
            let values = try await connection.pipeline(gets)
            #expect(values.count == count)
            let mismatches = values.indices.filter { values[$0] != .bulk(Array("value:\($0)".utf8)) }
            #expect(mismatches.isEmpty)
            #expect(try await connection.send("DBSIZE") == .integer(Int64(count)))
        }
    }

    @Test func pipelineReturnsErrorRepliesInPlace() async throws {
        try await LocalRedisServer.with { server in
            let connection = try await RedisConnection.connect(configuration: server.configuration)
            let replies = try await connection.pipeline([
                ["SET", "s", "1"],
                ["HSET", "s", "field", "v"],
                ["INCR", "s"],
            ])
            #expect(replies.count == 3)
            #expect(replies[0] == .status("OK"))
            #expect(replies[1].errorMessage?.hasPrefix("WRONGTYPE") == true)
            #expect(replies[2] == .integer(2))
        }
    }

    @Test func selectedDatabasesAreIsolated() async throws {
        try await LocalRedisServer.with { server in
            var first = server.configuration
            first.database = 1
            var second = server.configuration
            second.database = 2
            let one = try await RedisConnection.connect(configuration: first)
            let two = try await RedisConnection.connect(configuration: second)
            _ = try await one.send("SET", "shared-name", "db1")
            #expect(try await two.send("GET", "shared-name") == .null)
            _ = try await two.send("SET", "shared-name", "db2")
            #expect(try await one.send("GET", "shared-name").string == "db1")

            var outOfRange = server.configuration
            outOfRange.database = 4096
            let error = await redisError { try await RedisConnection.connect(configuration: outOfRange) }
            #expect(error?.code == .serverError)
            #expect(error?.message.contains("SELECT") == true)
        }
    }

    @Test func commandTimeoutFires() async throws {
        try await LocalRedisServer.with { server in
            var configuration = server.configuration
            configuration.commandTimeout = .milliseconds(200)
            let connection = try await RedisConnection.connect(configuration: configuration)
            let clock = ContinuousClock()
            let start = clock.now
            // The server would answer after 60 s: a timeout error well before then fired on the
            // client's clock, not on the reply. (The bound is far from the 200 ms on purpose: a
            // loaded CI machine once took 1.57 s to run the call and its timer.)
            let error = await redisError { try await connection.send("BLPOP", "empty-list", 60) }
            let elapsed = clock.now - start
            #expect(error?.code == .timeout)
            #expect(error?.isRetryable == true)
            #expect(error?.message.contains("127.0.0.1:\(server.port)") == true)
            #expect(elapsed >= .milliseconds(150))
            #expect(elapsed < .seconds(30))
            // The timed-out context is discarded; the next command gets a fresh connection.
            #expect(try await connection.send("PING") == .status("PONG"))
        }
    }

    @Test func aCommandInFlightWhenTheConnectionBreaksThrowsRetryable() async throws {
        try await LocalRedisServer.with { server in
            let blocked = try await RedisConnection.connect(configuration: server.configuration.fastFailing())
            let admin = try await RedisConnection.connect(configuration: server.configuration)
            let id = try #require(try await blocked.send("CLIENT", "ID").int)

            async let outcome = redisError { try await blocked.send("BLPOP", "never-filled", 0) }
            try await waitUntilBlocked(clientID: id, admin: admin)
            #expect(try await admin.send("CLIENT", "KILL", "ID", .integer(Int(id))) == .integer(1))

            let error = await outcome
            #expect(error?.code == .connectionClosed)
            #expect(error?.isRetryable == true)
            #expect(try await blocked.send("PING") == .status("PONG"))
        }
    }

    @Test func aClosedConnectionRefusesCommands() async throws {
        try await LocalRedisServer.with { server in
            let connection = try await RedisConnection.connect(configuration: server.configuration)
            await connection.close()
            let error = await redisError { try await connection.send("PING") }
            #expect(error?.code == .connectionClosed)
            #expect(error?.isRetryable == false)
        }
    }

    @Test func aCancelledCallerStopsWaitingAndTheConnectionReopensForTheNextCommand() async throws {
        try await LocalRedisServer.with { server in
            var configuration = server.configuration
            configuration.commandTimeout = nil  // a blocked command would wait forever
            let blocked = try await RedisConnection.connect(configuration: configuration)
            let admin = try await RedisConnection.connect(configuration: server.configuration)
            let id = try #require(try await blocked.send("CLIENT", "ID").int)

            let caller = Task { try await blocked.send("BLPOP", "never-filled", 0) }
            try await waitUntilBlocked(clientID: id, admin: admin)
            caller.cancel()
            await #expect(throws: CancellationError.self) { try await caller.value }

            // The abandoned command was cut off: its client is gone from the server, so a value
            // pushed now stays in the list; the next command reconnects.
            try await waitUntilGone(clientID: id, admin: admin)
            _ = try await admin.send("LPUSH", "never-filled", "kept")
            #expect(try await blocked.send("PING") == .status("PONG"))
            #expect(try await admin.send("LLEN", "never-filled") == .integer(1))
        }
    }

    @Test func closeEndsACommandBlockedOnTheSocketAtOnce() async throws {
        try await LocalRedisServer.with { server in
            var configuration = server.configuration
            configuration.commandTimeout = nil
            let blocked = try await RedisConnection.connect(configuration: configuration)
            let admin = try await RedisConnection.connect(configuration: server.configuration)
            let id = try #require(try await blocked.send("CLIENT", "ID").int)

            async let outcome = redisError { try await blocked.send("BLPOP", "never-filled", 0) }
            try await waitUntilBlocked(clientID: id, admin: admin)
            await blocked.close()
            #expect(await outcome?.code == .connectionClosed)
            #expect(await redisError { try await blocked.send("PING") }?.isRetryable == false)
        }
    }

    @Test func aServerThatStopsAnsweringHoldsNeitherACancelledCallerNorTheShutdown() async throws {
        try await LocalRedisServer.with { server in
            var configuration = server.configuration
            configuration.commandTimeout = nil  // without cancellation, the wait would never end
            let client = RedisClient(configuration: configuration)
            let admin = try await RedisConnection.connect(configuration: server.configuration)
            let (ids, idInput) = AsyncStream.makeStream(of: Int64.self)
            let caller = Task {
                try await client.withConnection { connection in
                    idInput.yield(try #require(try await connection.send("CLIENT", "ID").int))
                    return try await connection.send("BLPOP", "never-filled", 0)
                }
            }
            var iterator = ids.makeAsyncIterator()
            let id = try #require(await iterator.next())
            try await waitUntilBlocked(clientID: id, admin: admin)
            // The caller sits in its read, and the server stops answering altogether.
            await server.pause()
            caller.cancel()
            await #expect(throws: CancellationError.self) { try await caller.value }
            let shutDown = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    await client.shutdown()
                    return true
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(30))
                    return false
                }
                defer { group.cancelAll() }
                return await group.next()!
            }
            #expect(shutDown, "the client's shutdown waited on a server that does not answer")
            await server.resume()
        }
    }

    /// Polls `CLIENT LIST` until the client is no longer connected, at most 5 s.
    private func waitUntilGone(clientID: Int64, admin: RedisConnection) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(5)
        while clock.now < deadline {
            if (try await admin.send("CLIENT", "LIST", "ID", .integer(Int(clientID))).string ?? "").isEmpty {
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("client \(clientID) still connected")
    }
}
