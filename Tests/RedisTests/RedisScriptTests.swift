import LocalRedis
import Redis
import Testing

@Suite("Scripts with EVALSHA")
struct RedisScriptTests {
    @Test func firstRunLoadsThenEvalSHAIsUsed() async throws {
        try await LocalRedisServer.with { server in
            let connection = try await RedisConnection.connect(configuration: server.configuration)
            let script = RedisScript("return redis.call('INCRBY', KEYS[1], ARGV[1])")
            #expect(script.sha1 == nil)
            #expect(try await connection.evalScript(script, keys: ["n"], arguments: [5]) == .integer(5))
            let sha1 = try #require(script.sha1)
            #expect(sha1.count == 40)
            #expect(try await connection.send("SCRIPT", "EXISTS", .string(sha1)) == .array([.integer(1)]))

            // With the hash known, a second run sends EVALSHA only: no new SCRIPT LOAD.
            let loadsBefore = try await scriptLoadCalls(connection)
            #expect(try await connection.evalScript(script, keys: ["n"], arguments: [2]) == .integer(7))
            #expect(try await scriptLoadCalls(connection) == loadsBefore)
        }
    }

    @Test func noScriptAfterFlushReloadsAndRetries() async throws {
        try await LocalRedisServer.with { server in
            let connection = try await RedisConnection.connect(configuration: server.configuration)
            let script = RedisScript("return {KEYS[1], ARGV[1]}")
            _ = try await connection.evalScript(script, keys: ["k"], arguments: ["v"])
            let sha1 = try #require(script.sha1)
            #expect(try await connection.send("SCRIPT", "FLUSH") == .status("OK"))
            #expect(try await connection.send("SCRIPT", "EXISTS", .string(sha1)) == .array([.integer(0)]))

            let reply = try await connection.evalScript(script, keys: ["k2"], arguments: [.bytes([0, 1])])
            #expect(reply == .array([.bulk(Array("k2".utf8)), .bulk([0, 1])]))
            #expect(try await connection.send("SCRIPT", "EXISTS", .string(sha1)) == .array([.integer(1)]))
        }
    }

    @Test func scriptErrorsSurfaceAsServerErrors() async throws {
        try await LocalRedisServer.with { server in
            let connection = try await RedisConnection.connect(configuration: server.configuration)
            let failing = RedisScript("return redis.error_reply('QUOTA exceeded for app')")
            let error = await redisError { try await connection.evalScript(failing) }
            #expect(error?.code == .serverError)
            #expect(error?.message.hasPrefix("QUOTA exceeded for app") == true)

            let broken = RedisScript("return redis.call('INCR')")
            let runtime = await redisError { try await connection.evalScript(broken) }
            #expect(runtime?.code == .serverError)
            #expect(runtime?.message.contains("Wrong number of args") == true)

            let invalid = RedisScript("this is not lua")
            let compile = await redisError { try await connection.evalScript(invalid) }
            #expect(compile?.code == .serverError)
            #expect(compile?.message.contains("Error compiling script") == true)
        }
    }

    /// How many times the server executed `SCRIPT LOAD` (from `INFO commandstats`).
    private func scriptLoadCalls(_ connection: RedisConnection) async throws -> Int {
        let info = try await connection.send("INFO", "commandstats").string ?? ""
        guard let line = info.split(separator: "\r\n").first(where: { $0.hasPrefix("cmdstat_script|load:") }) else {
            return 0
        }
        let calls = line.split(separator: ":")[1].split(separator: ",").first { $0.hasPrefix("calls=") }
        return Int(calls?.dropFirst("calls=".count) ?? "") ?? -1
    }
}
