import Foundation
import LocalRedis
import Redis
import Testing

@testable import PushStore

/// Which Redis the store suites run on: one `redis-server` (the default), or, with
/// `PUSHFLEET_TEST_REDIS=cluster`, a Redis Cluster of 3 masters (`scripts/test.sh` runs the
/// suites both ways). Every test gets a fresh one.
enum TestRedis {
    static let onCluster = ProcessInfo.processInfo.environment["PUSHFLEET_TEST_REDIS"] == "cluster"

    /// Runs `body` with `count` clients of one fresh server or cluster.
    static func with<Value>(clients count: Int, _ body: ([any RedisCommands]) async throws -> Value) async throws -> Value {
        if onCluster {
            return try await LocalRedisCluster.with(replicasPerMaster: 0) { cluster async throws in
                try await run((0..<count).map { _ in RedisClusterClient(configuration: cluster.configuration) }, body)
            }
        }
        return try await LocalRedisServer.with { server async throws in
            try await run((0..<count).map { _ in RedisClient(configuration: server.configuration) }, body)
        }
    }

    private static func run<Value>(_ clients: [any RedisCommands], _ body: ([any RedisCommands]) async throws -> Value) async throws -> Value {
        do {
            let value = try await body(clients)
            for client in clients { await client.shutdown() }
            return value
        } catch {
            for client in clients { await client.shutdown() }
            throw error
        }
    }
}

/// Runs `body` with a client of a fresh `redis-server` (or cluster, see ``TestRedis``).
func withRedis<Value>(_ body: (any RedisCommands) async throws -> Value) async throws -> Value {
    try await TestRedis.with(clients: 1) { try await body($0[0]) }
}

extension RedisCommands {
    /// `arguments` sent to the server, or to every master of a cluster (commands without a key).
    func sendToEveryNode(_ arguments: [RedisArgument]) async throws -> [RedisReply] {
        if let cluster = self as? RedisClusterClient {
            return try await cluster.sendToEveryMaster(arguments).map(\.1)
        }
        return [try await send(arguments)]
    }

    /// Keys in the server, or in every master of a cluster (`DBSIZE`).
    func keyCount() async throws -> Int {
        try await sendToEveryNode(["DBSIZE"]).reduce(0) { $0 + Int($1.int ?? 0) }
    }

    /// Empties the server, or every master of a cluster (`FLUSHALL`).
    func flushEverything() async throws {
        _ = try await sendToEveryNode(["FLUSHALL"])
    }

    /// How many `EVALSHA` calls the server (every master of a cluster) has run (`INFO commandstats`).
    func evalshaCalls() async throws -> Int {
        try await commandCalls("evalsha")
    }

    /// How many calls of `command` (lowercase) the server, or every master of a cluster, has run
    /// (`INFO commandstats`); `failed`: only those that answered an error (`failed_calls`, such
    /// as an `EVALSHA` of a script the server did not know yet).
    func commandCalls(_ command: String, failed: Bool = false) async throws -> Int {
        let line = "cmdstat_\(command):"
        let field = failed ? "failed_calls=" : "calls="
        return try await sendToEveryNode(["INFO", "commandstats"]).map { $0.string ?? "" }.reduce(0) { total, info in
            guard let stats = info.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix(line) }) else {
                return total
            }
            let value = stats.dropFirst(line.count).split(separator: ",").first { $0.hasPrefix(field) }
            return total + (value.flatMap { Int($0.dropFirst(field.count)) } ?? 0)
        }
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
