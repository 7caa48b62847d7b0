import Redis

/// The Lua scripts of the resend buffer. Each runs inside one app's resend slot
/// `{<app>:resend}`, atomically; `schemas/redis.md` describes the keys they touch.
enum ResendScripts {
    /// Schedules entries (`ZADD` due time, `HSET` value) and removes expired ones (`ZREM`,
    /// `HDEL`), in order: a member listed twice ends as its last listing says. Both keys then
    /// live for the retention from now (`PEXPIRE`): a buffer nothing writes to any more (its app
    /// was removed from the configuration) leaves Redis.
    ///
    /// KEYS: due, entries. ARGV: the retention in ms, then triples of member, due ms (`""`:
    /// remove), value. Returns the number of entries scheduled.
    static let schedule = RedisScript(
        """
        local scheduled = 0
        for i = 2, #ARGV, 3 do
          if ARGV[i + 1] == '' then
            redis.call('ZREM', KEYS[1], ARGV[i])
            redis.call('HDEL', KEYS[2], ARGV[i])
          else
            redis.call('ZADD', KEYS[1], ARGV[i + 1], ARGV[i])
            redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 2])
            scheduled = scheduled + 1
          end
        end
        redis.call('PEXPIRE', KEYS[1], ARGV[1])
        redis.call('PEXPIRE', KEYS[2], ARGV[1])
        return scheduled
        """
    )

}
