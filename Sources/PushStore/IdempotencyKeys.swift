import FlowControl
import Redis

/// Producer-chosen idempotency keys of jobs, per app: the first job that claims a key owns it,
/// and a second job with the same key is answered with the first one's id instead of being
/// published (the HTTP API) or expanded (the expand stage) again.
///
/// One string key per (app, idempotency key), `pf:{<app>}:idempotency:<key>`, holding the
/// owner's job id and, for claims made by the API, a digest of the request that made it (so the
/// same key sent with a different request is refused). Keys expire after ``timeToLive``.
public final class IdempotencyKeys: Sendable {
    /// How long a claimed key is remembered.
    package let timeToLive: Duration
    let client: any RedisCommands

    /// Creates the store over `client`.
    ///
    /// - Parameter timeToLive: at least 1 ms; default 24 hours.
    public init(client: any RedisCommands, timeToLive: Duration = .seconds(24 * 3600)) {
        precondition(timeToLive >= .milliseconds(1), "timeToLive must be at least 1 ms")
        self.client = client
        self.timeToLive = timeToLive
    }

    /// Who owns an idempotency key.
    package struct Owner: Sendable, Hashable {
        package var jobID: String
        /// The digest of the request that claimed it; empty when the claim carried none.
        package var digest: String

        package init(jobID: String, digest: String) {
            self.jobID = jobID
            self.digest = digest
        }
    }

    /// Claims `key` for `jobID` unless it is claimed already (one script: `GET`, else
    /// `SET PX`).
    ///
    /// - Parameter digest: identifies the request (e.g. a hash of its body); may be empty.
    /// - Returns: nil when the claim is new; otherwise the key's owner (possibly `jobID` itself,
    ///   when the same job claims again).
    /// - Throws: ``StoreError`` naming `app`, `key`, `jobID` or `digest`;
    ///   `RedisClientError`.
    package func claim(app: String, key: String, jobID: String, digest: String = "") async throws -> Owner? {
        try StoreValidation.app(app)
        try Self.validate(key)
        try StoreValidation.jobID(jobID)
        guard !digest.utf8.contains(UInt8(ascii: "\n")) else {
            throw StoreError(.invalidArgument, field: "digest", message: "must not hold a line feed")
        }
        let reply = try await client.runScript(
            Self.claimScript,
            keys: [.string(Self.redisKey(app: app, key: key))],
            arguments: [.string(jobID + "\n" + digest), .string(String(timeToLive.wholeMilliseconds))]
        )
        if reply.isNull {
            return nil
        }
        guard let value = reply.string else {
            throw StoreError.unexpected(reply, from: "the idempotency claim script")
        }
        let parts = value.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        return Owner(jobID: String(parts[0]), digest: parts.count > 1 ? String(parts[1]) : "")
    }

    /// Gives up `jobID`'s claim of `key` (e.g. when publishing the job failed), so that a retry
    /// of the request can claim it again; a key owned by another job is left alone.
    ///
    /// - Returns: whether the claim was removed.
    /// - Throws: ``StoreError`` naming `app`, `key` or `jobID`; `RedisClientError`.
    @discardableResult
    package func release(app: String, key: String, jobID: String) async throws -> Bool {
        try StoreValidation.app(app)
        try Self.validate(key)
        try StoreValidation.jobID(jobID)
        let reply = try await client.runScript(
            Self.releaseScript, keys: [.string(Self.redisKey(app: app, key: key))], arguments: [.string(jobID)])
        return reply.int == 1
    }

    /// The longest key in bytes: a job's key is at most 128 code points, 512 bytes of UTF-8.
    package static let maxKeyBytes = 512

    /// Keys are binary-safe in Redis: any non-empty text up to ``maxKeyBytes``.
    static func validate(_ key: String) throws(StoreError) {
        guard !key.isEmpty, key.utf8.count <= maxKeyBytes else {
            throw StoreError(.invalidArgument, field: "key", message: "an idempotency key must be 1 to \(maxKeyBytes) bytes")
        }
    }

    /// `pf:{<app>}:idempotency:<key>`
    static func redisKey(app: String, key: String) -> String {
        "pf:{\(app)}:idempotency:\(key)"
    }

    /// KEYS: the claim. ARGV: job id + LF + digest, TTL ms. Returns the existing value, or nil
    /// after claiming.
    static let claimScript = RedisScript(
        """
        local owner = redis.call('GET', KEYS[1])
        if owner then
          return owner
        end
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
        return false
        """
    )

    /// KEYS: the claim. ARGV: job id. Deletes the claim if the job owns it; returns 1 if deleted.
    static let releaseScript = RedisScript(
        """
        local owner = redis.call('GET', KEYS[1])
        if owner and string.sub(owner, 1, #ARGV[1] + 1) == ARGV[1] .. '\\n' then
          return redis.call('DEL', KEYS[1])
        end
        return 0
        """
    )
}
