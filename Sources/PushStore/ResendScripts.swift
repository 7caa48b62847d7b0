import Redis

/// The Lua scripts of the resend buffer. Each runs inside one app's resend slot
/// `{<app>:resend}`, atomically; `schemas/redis.md` describes the keys they touch.
enum ResendScripts {
    /// Schedules entries (`ZADD` due time, `HSET` value) and removes expired ones (`ZREM`,
    /// `HDEL`), in order: a member listed twice ends as its last listing says. An expired member
    /// listed with a job's number counts once for that job if it was there; each job with a count
    /// gets its tally (``ResendTally``: the job id, then `<counter>=<count>`), listed by time.
    /// The keys written then live for the retention from now (`PEXPIRE`): a buffer nothing
    /// writes to any more (its app was removed from the configuration) leaves Redis.
    ///
    /// KEYS: due, entries, tallies, tally values. ARGV: the retention in ms, now ms, the counter's
    /// name, the number of jobs k, then k pairs of job id and tally id, then triples of member,
    /// due ms (`""`: remove), and the value (for a removal: the job's number from 1, `""`: not
    /// counted). Returns `{1 or 0, …}`: whether each counted removal found its member.
    static let schedule = RedisScript(
        """
        local jobs = tonumber(ARGV[4])
        local counts = {}
        local present = {}
        for i = 5 + 2 * jobs, #ARGV, 3 do
          if ARGV[i + 1] == '' then
            local removed = redis.call('ZREM', KEYS[1], ARGV[i])
            redis.call('HDEL', KEYS[2], ARGV[i])
            if ARGV[i + 2] ~= '' then
              present[#present + 1] = removed
              local job = tonumber(ARGV[i + 2])
              counts[job] = (counts[job] or 0) + removed
            end
          else
            redis.call('ZADD', KEYS[1], ARGV[i + 1], ARGV[i])
            redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 2])
          end
        end
        for job = 1, jobs do
          if (counts[job] or 0) > 0 then
            local id = ARGV[4 + 2 * job]
            redis.call('HSET', KEYS[4], id, ARGV[3 + 2 * job] .. '\\n' .. ARGV[3] .. '=' .. counts[job])
            redis.call('ZADD', KEYS[3], ARGV[2], id)
            redis.call('PEXPIRE', KEYS[3], ARGV[1])
            redis.call('PEXPIRE', KEYS[4], ARGV[1])
          end
        end
        redis.call('PEXPIRE', KEYS[1], ARGV[1])
        redis.call('PEXPIRE', KEYS[2], ARGV[1])
        return present
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
