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

    /// Removes entries of one job by member, leased or not, and tallies the final outcome of
    /// each one that was there: its counter names, summed per name. A tally with any count is
    /// written under its id (``ResendTally``) and listed by time; both keys then live for the
    /// retention from now.
    ///
    /// KEYS: due, entries, tallies, tally values. ARGV: the tally id, now ms, the retention in
    /// ms, the job id, then pairs of member and its counter names (one per line; `""`: none).
    /// Returns `{1 or 0, …}`: whether each member was there.
    static let complete = RedisScript(
        """
        local present = {}
        local counts = {}
        local names = {}
        for i = 5, #ARGV, 2 do
          local removed = redis.call('ZREM', KEYS[1], ARGV[i])
          redis.call('HDEL', KEYS[2], ARGV[i])
          present[#present + 1] = removed
          if removed == 1 then
            for name in string.gmatch(ARGV[i + 1], '[^\\n]+') do
              if counts[name] == nil then
                counts[name] = 0
                names[#names + 1] = name
              end
              counts[name] = counts[name] + 1
            end
          end
        end
        if #names > 0 then
          local value = ARGV[4]
          for _, name in ipairs(names) do
            value = value .. '\\n' .. name .. '=' .. counts[name]
          end
          redis.call('HSET', KEYS[4], ARGV[1], value)
          redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
          redis.call('PEXPIRE', KEYS[3], ARGV[3])
          redis.call('PEXPIRE', KEYS[4], ARGV[3])
        end
        return present
        """
    )

    /// Up to `limit` tallies written before a time, oldest first, with their values; a listed
    /// tally without a value is dropped from the list.
    ///
    /// KEYS: tallies, tally values. ARGV: the time (ms), limit. Returns `{id, value, id, value, …}`.
    static let pendingTallies = RedisScript(
        """
        local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
        local found = {}
        for _, id in ipairs(ids) do
          local value = redis.call('HGET', KEYS[2], id)
          if value then
            found[#found + 1] = id
            found[#found + 1] = value
          else
            redis.call('ZREM', KEYS[1], id)
          end
        end
        return found
        """
    )
}
