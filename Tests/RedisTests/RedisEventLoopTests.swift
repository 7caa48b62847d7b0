import LocalRedis
import Testing

@testable import Redis

@Suite("RedisEventLoop: batches written by their callers, replies read on one thread")
struct RedisEventLoopTests {
    @Test func concurrentCallersOnOneConnectionTakeTurnsAndEachGetsItsOwnReply() async throws {
        try await LocalRedisServer.with { server in
            let connection = try await RedisConnection.connect(configuration: server.configuration)
            let replies = try await withThrowingTaskGroup(of: (Int, RedisReply, [RedisReply]).self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let single = try await connection.send("ECHO", .string("caller-\(index)"))
                        let batch = try await connection.pipeline([["INCR", "calls"], ["ECHO", .integer(index)]])
                        return (index, single, batch)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.count == 200)
            for (index, single, batch) in replies {
                #expect(single.string == "caller-\(index)")
                #expect(batch.count == 2)
                #expect(batch.last?.string == "\(index)")
            }
            let counts = Set(replies.compactMap { $0.2.first?.int })
            #expect(counts == Set(1...200), "every INCR ran once, in some order")
            await connection.close()
        }
    }

    @Test func aBatchLargerThanTheSocketBuffersGoesOutAndComesBackWhole() async throws {
        try await LocalRedisServer.with { server in
            let connection = try await RedisConnection.connect(configuration: server.configuration)
            let value = (0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
            let replies = try await connection.pipeline([
                ["SET", "big", .bytes(value)], ["STRLEN", "big"], ["GET", "big"], ["GET", "big"],
            ])
            #expect(replies.count == 4)
            #expect(replies[0] == .status("OK"))
            #expect(replies[1] == .integer(Int64(value.count)))
            #expect(replies[2] == .bulk(value))
            #expect(replies[3] == .bulk(value))
            #expect(try await connection.send("PING") == .status("PONG"))
            await connection.close()
        }
    }

    @Test func tasksThatPreferTheLoopResumeOnItsThreadAndShareAPool() async throws {
        try await LocalRedisServer.with { server in
            var configuration = server.configuration
            configuration.poolSize = 4
            let client = RedisClient(configuration: configuration)
            let loop = RedisEventLoop.shared
            let onLoop = try await withThrowingTaskGroup(of: Bool.self) { group in
                for task in 0..<50 {
                    group.addTask(executorPreference: loop) {
                        var everyResumeOnTheLoop = true
                        for round in 0..<20 {
                            let reply = try await client.send("INCR", .string("task-\(task)"))
                            #expect(reply.int == Int64(round + 1))
                            everyResumeOnTheLoop = everyResumeOnTheLoop && loop.isCurrentThread
                        }
                        return everyResumeOnTheLoop
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(onLoop.count == 50)
            #expect(onLoop.allSatisfy { $0 })
            #expect(!loop.isCurrentThread, "this test itself runs on Swift's global executor")
            #expect(try await client.send("GET", "task-49").int == 20)
            await client.shutdown()
        }
    }

    @Test func closeFailsTheCallersQueuedBehindACommandThatWaits() async throws {
        try await LocalRedisServer.with { server in
            var configuration = server.configuration
            configuration.commandTimeout = nil
            let connection = try await RedisConnection.connect(configuration: configuration)
            let admin = try await RedisConnection.connect(configuration: server.configuration)
            let id = try #require(try await connection.send("CLIENT", "ID").int)

            async let blocked = redisError { try await connection.send("BLPOP", "never-filled", 0) }
            try await waitUntilBlocked(clientID: id, admin: admin)
            async let first = redisError { try await connection.send("PING") }
            async let second = redisError { try await connection.send("PING") }
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(10)
            while connection.hiredis.waitingCallers < 2, clock.now < deadline {
                try await Task.sleep(for: .milliseconds(2))
            }
            #expect(connection.hiredis.waitingCallers == 2)
            await connection.close()
            #expect(await blocked?.code == .connectionClosed)
            let queued = await [first, second]
            #expect(queued.map { $0?.code } == [.connectionClosed, .connectionClosed])
            #expect(queued.allSatisfy { $0?.isRetryable == false }, "queued commands never reached the server")
            await admin.close()
        }
    }
}
