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

    /// Claims up to `limit` entries due at `now`: moves each one's due time to `until` (the end
    /// of the lease) and returns it with its value. A due member without a value is dropped.
    ///
    /// KEYS: due, entries. ARGV: now ms, lease end ms, limit.
    /// Returns `{member, value, member, value, …}`, earliest due first.
    static let claimDue = RedisScript(
        """
        local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
        local claimed = {}
        for _, member in ipairs(due) do
          local value = redis.call('HGET', KEYS[2], member)
          if value then
            redis.call('ZADD', KEYS[1], 'XX', ARGV[2], member)
            claimed[#claimed + 1] = member
            claimed[#claimed + 1] = value
          else
            redis.call('ZREM', KEYS[1], member)
          end
        end
        return claimed
        """
    )

    /// Removes entries by member, leased or not.
    ///
    /// KEYS: due, entries. ARGV: members. Returns `{1 or 0, …}`: whether each was present.
    static let complete = RedisScript(
        """
        local present = {}
        for i = 1, #ARGV do
          present[i] = redis.call('ZREM', KEYS[1], ARGV[i])
          redis.call('HDEL', KEYS[2], ARGV[i])
        end
        return present
        """
    )
}
