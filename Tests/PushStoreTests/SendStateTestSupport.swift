import Redis
import Testing

@testable import PushStore

/// Runs `body` with a client of a fresh `redis-server`.
func withRedis<Value>(_ body: (RedisClient) async throws -> Value) async throws -> Value {
    try await LocalRedisServer.with { server in
        let client = RedisClient(configuration: server.configuration)
        do {
            let value = try await body(client)
            await client.shutdown()
            return value
        } catch {
            await client.shutdown()
            throw error
        }
    }
}

extension RedisClient {
    /// How many `EVALSHA` calls the server has run (`INFO commandstats`).
    func evalshaCalls() async throws -> Int {
        let info = try await send("INFO", "commandstats").string ?? ""
        guard let line = info.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_evalsha:") }) else {
            return 0
        }
        let calls = line.split(separator: ",").first { $0.hasPrefix("cmdstat_evalsha:calls=") }
        return calls.flatMap { Int($0.dropFirst("cmdstat_evalsha:calls=".count)) } ?? 0
    }

    /// The server's clock (`TIME`) in microseconds since 1970.
    func serverMicroseconds() async throws -> Int64 {
        let reply = try await send("TIME")
        guard let parts = reply.array, parts.count == 2, let seconds = parts[0].int, let micros = parts[1].int else {
            Issue.record("TIME answered \(reply)")
            return 0
        }
        return seconds * 1_000_000 + micros
    }

    /// The remaining time to live of `key` in milliseconds (`PTTL`: -2 missing, -1 no TTL).
    func pttl(_ key: String) async throws -> Int64 {
        try await send("PTTL", .string(key)).int ?? -3
    }

    /// `MEMORY USAGE key SAMPLES 0` (every element counted), in bytes.
    func memoryUsage(_ key: String) async throws -> Int {
        Int(try await send("MEMORY", "USAGE", .string(key), "SAMPLES", 0).int ?? 0)
    }
}

/// Bytes of a string, for JSON fixtures.
func utf8(_ text: String) -> [UInt8] {
    Array(text.utf8)
}
