import Redis

/// The jobs of each app, newest first, for listing them (the API's job list, the console): one
/// sorted set per app, `pf:{<app>}:jobs`, job id scored by when it was first seen (ms since
/// 1970). Entries older than a job's keys (7 days) are dropped as new ones come, and an app
/// keeps at most ``maxJobs``.
package final class JobIndex: Sendable {
    /// The most jobs an app's index holds; older ones are dropped first.
    package static let maxJobs = 10_000
    /// How long a job stays listed: as long as its statistics live.
    package static let retentionMilliseconds: Int64 = 7 * 24 * 3_600_000

    let client: any RedisCommands

    package init(client: any RedisCommands) {
        self.client = client
    }

    /// Lists a job of `app`, first seen at `at`; a job listed already keeps its first time.
    ///
    /// - Throws: ``StoreError`` naming `app` or `jobID`; `RedisClientError`.
    package func add(app: String, jobID: String, at: Int64) async throws {
        try StoreValidation.app(app)
        try StoreValidation.jobID(jobID)
        _ = try await client.runScript(
            Self.addScript, keys: [.string(Self.key(app: app))],
            arguments: [.string(jobID), .integer(Int(at)), .integer(Int(at - Self.retentionMilliseconds)), .integer(Self.maxJobs)])
    }

    /// The app's jobs first seen at or after `since` (ms since 1970), newest first, at most `limit`.
    ///
    /// - Throws: ``StoreError`` naming `app`, or `unexpectedReply`; `RedisClientError`.
    package func recent(app: String, since: Int64 = 0, limit: Int) async throws -> [(jobID: String, at: Int64)] {
        try StoreValidation.app(app)
        let reply = try await client.send(
            "ZREVRANGEBYSCORE", .string(Self.key(app: app)), "+inf", .string(String(since)), "WITHSCORES", "LIMIT", "0",
            .string(String(max(0, limit))))
        guard let items = reply.array, items.count.isMultiple(of: 2) else {
            throw StoreError.unexpected(reply, from: "ZREVRANGEBYSCORE of the jobs of app \(app)")
        }
        return try stride(from: 0, to: items.count, by: 2).map { index in
            guard let jobID = items[index].string, let score = items[index + 1].string.flatMap(Double.init) else {
                throw StoreError.unexpected(reply, from: "ZREVRANGEBYSCORE of the jobs of app \(app)")
            }
            return (jobID, Int64(score))
        }
    }

    /// When the app's job was first seen (ms since 1970); nil when it is not listed (unknown,
    /// or dropped from the index).
    ///
    /// - Throws: ``StoreError`` naming `app` or `jobID`; `RedisClientError`.
    package func listedAt(app: String, jobID: String) async throws -> Int64? {
        try StoreValidation.app(app)
        try StoreValidation.jobID(jobID)
        let reply = try await client.send("ZSCORE", .string(Self.key(app: app)), .string(jobID))
        if reply.isNull { return nil }
        guard let score = reply.string.flatMap(Double.init) else { throw StoreError.unexpected(reply, from: "ZSCORE of job \(jobID) of app \(app)") }
        return Int64(score)
    }

    /// `pf:{<app>}:jobs`
    static func key(app: String) -> String {
        "pf:{\(app)}:jobs"
    }

    /// KEYS: the index. ARGV: job id, time, the oldest time kept, the most jobs kept.
    static let addScript = RedisScript(
        """
        redis.call('ZADD', KEYS[1], 'NX', ARGV[2], ARGV[1])
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
        redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -tonumber(ARGV[4]) - 1)
        return 1
        """
    )
}
