import Redis

/// The Lua scripts of the resend buffer. Each runs inside one app's resend slot
/// `{<app>:resend}`, atomically; `schemas/redis.md` describes the keys they touch.
enum ResendScripts {
    /// Schedules entries (`ZADD` due time, `HSET` value) and removes expired ones (`ZREM`,
    /// `HDEL`), in order: a member listed twice ends as its last listing says.
    ///
    /// KEYS: due, entries. ARGV: triples of member, due ms (`""`: remove), value.
    /// Returns the number of entries scheduled.
    static let schedule = RedisScript(
        """
        local scheduled = 0
        for i = 1, #ARGV, 3 do
          if ARGV[i + 1] == '' then
            redis.call('ZREM', KEYS[1], ARGV[i])
            redis.call('HDEL', KEYS[2], ARGV[i])
          else
            redis.call('ZADD', KEYS[1], ARGV[i + 1], ARGV[i])
            redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 2])
            scheduled = scheduled + 1
          end
        end
        return scheduled
        """
    )

}
