import LocalRedis
import Redis
import Testing

@Suite("AUTH with a password and with an ACL user")
struct RedisAuthenticationTests {
    @Test func passwordIsSentOnConnect() async throws {
        try await LocalRedisServer.with(password: "s3cret") { server in
            let connection = try await RedisConnection.connect(configuration: server.configuration)
            #expect(try await connection.send("PING") == .status("PONG"))
            #expect(try await connection.send("ACL", "WHOAMI").string == "default")
        }
    }

    @Test func wrongPasswordIsAClearError() async throws {
        try await LocalRedisServer.with(password: "s3cret") { server in
            var configuration = server.configuration.fastFailing()
            configuration.password = "wrong"
            let error = await redisError { try await RedisConnection.connect(configuration: configuration) }
            #expect(error?.code == .authenticationFailed)
            #expect(error?.isRetryable == false)
            #expect(error?.message.contains("WRONGPASS") == true)
            #expect(error?.message.contains("127.0.0.1:\(server.port)") == true)
        }
    }

    @Test func missingPasswordFailsTheFirstCommand() async throws {
        try await LocalRedisServer.with(password: "s3cret") { server in
            var configuration = server.configuration
            configuration.password = nil
            let connection = try await RedisConnection.connect(configuration: configuration)
            let error = await redisError { try await connection.send("GET", "k") }
            #expect(error?.code == .serverError)
            #expect(error?.message.hasPrefix("NOAUTH") == true)
        }
    }

    @Test func aclUserAuthenticatesWithUsernameAndPassword() async throws {
        try await LocalRedisServer.with(password: "admin-pass") { server in
            let admin = try await RedisConnection.connect(configuration: server.configuration)
            let created = try await admin.send("ACL", "SETUSER", "worker", "on", ">worker-pass", "~push:*", "+@all")
            #expect(created == .status("OK"))

            var configuration = server.configuration.fastFailing()
            configuration.username = "worker"
            configuration.password = "worker-pass"
            let worker = try await RedisConnection.connect(configuration: configuration)
            #expect(try await worker.send("ACL", "WHOAMI").string == "worker")
            #expect(try await worker.send("SET", "push:1", "x") == .status("OK"))
            let denied = await redisError { try await worker.send("SET", "other", "x") }
            #expect(denied?.code == .serverError)
            #expect(denied?.message.hasPrefix("NOPERM") == true)

            configuration.password = "not-the-worker-pass"
            let error = await redisError { try await RedisConnection.connect(configuration: configuration) }
            #expect(error?.code == .authenticationFailed)
            #expect(error?.message.contains("'worker'") == true)
        }
    }
}
