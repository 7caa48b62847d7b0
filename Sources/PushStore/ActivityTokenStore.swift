import APNsCore
import PushCore
import Redis

/// The update tokens of Live Activities: ActivityKit gives each running activity on a device a
/// token of its own, valid while the activity lives (at most 8 hours, then up to 4 on the lock
/// screen), so each is kept with an expiry. One sorted set per app, environment and activity,
/// `pf:{<app>}:activity:<environment>:<activity>`, token (hex) scored by its expiry (ms since
/// 1970), expiring with its last token. A job whose audience is `{"activity": "<id>"}` goes to
/// the activity's tokens that have not expired.
package final class ActivityTokenStore: Sendable {
    /// The most update tokens one activity holds; more is what broadcast channels are for.
    package static let maxTokensPerActivity = 100_000
    /// The longest a token is kept (24 h) and the default (12 h: 8 hours running, 4 on the lock screen).
    package static let maxLifetimeMilliseconds: Int64 = 24 * 3_600_000
    package static let defaultLifetimeMilliseconds: Int64 = 12 * 3_600_000

    let client: any RedisCommands

    package init(client: any RedisCommands) {
        self.client = client
    }

    /// Keeps `token` for the activity until `expiresAt` (replacing an earlier expiry).
    ///
    /// - Returns: `false` when the activity already holds `limit` other tokens.
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func register(
        app: String, environment: APNsEnvironment, activity: LiveActivityID, token: DeviceToken, expiresAt: Int64, now: Int64,
        limit: Int = ActivityTokenStore.maxTokensPerActivity
    ) async throws -> Bool {
        try StoreValidation.app(app)
        let reply = try await client.runScript(
            Self.registerScript, keys: [.string(Self.key(app: app, environment: environment, activity: activity))],
            arguments: [.string(token.hex), .integer(Int(expiresAt)), .integer(Int(now)), .integer(limit)])
        guard let stored = reply.int else { throw StoreError.unexpected(reply, from: "the register-activity-token script") }
        return stored == 1
    }

    /// Forgets a token; `false` when it was not kept.
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    @discardableResult
    package func unregister(app: String, environment: APNsEnvironment, activity: LiveActivityID, token: DeviceToken) async throws -> Bool {
        try StoreValidation.app(app)
        let reply = try await client.send(
            "ZREM", .string(Self.key(app: app, environment: environment, activity: activity)), .string(token.hex))
        return reply.int == 1
    }

    /// The activity's tokens that have not expired at `now`, in the order of their bytes (so a
    /// job read again lists the tokens it listed before at the same positions, but for tokens
    /// registered or expired in between); expired ones are dropped.
    ///
    /// - Throws: ``StoreError`` naming `app`, or `unexpectedReply`; `RedisClientError`.
    package func tokens(app: String, environment: APNsEnvironment, activity: LiveActivityID, now: Int64) async throws -> [DeviceToken] {
        try StoreValidation.app(app)
        let key = Self.key(app: app, environment: environment, activity: activity)
        let replies = try await client.pipeline([
            ["ZREMRANGEBYSCORE", .string(key), "-inf", .string(String(now))],
            ["ZRANGE", .string(key), "0", "-1"],
        ])
        guard replies.count == 2, let members = replies[1].array else {
            throw StoreError.unexpected(replies.last ?? .null, from: "ZRANGE of activity \(activity) of app \(app)")
        }
        let hexes = try members.map { member in
            guard let hex = member.string else { throw StoreError.unexpected(member, from: "ZRANGE of activity \(activity) of app \(app)") }
            return hex
        }
        return try hexes.sorted().map { hex in
            guard let token = try? DeviceToken(hex: hex) else {
                throw StoreError(.unexpectedReply, field: nil, message: "activity \(activity) of app \(app) holds '\(hex)', not a token")
            }
            return token
        }
    }

    /// `pf:{<app>}:activity:<environment>:<activity>`
    static func key(app: String, environment: APNsEnvironment, activity: LiveActivityID) -> String {
        "pf:{\(app)}:activity:\(environment.rawValue):\(activity.rawValue)"
    }

    /// KEYS: the activity's set. ARGV: token, expires-at, now, limit. Drops expired tokens,
    /// refuses a new token past the limit (0), else adds or re-dates it and makes the set
    /// expire with its last token (1).
    static let registerScript = RedisScript(
        """
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
        if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
          return 0
        end
        redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
        local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
        redis.call('PEXPIREAT', KEYS[1], last[2])
        return 1
        """
    )
}
