import Redis

/// Scripts of a leased queue: a ZSET of members by due time (ms) and a HASH of their values,
/// in one slot. Claiming moves a member's due time to the end of a lease instead of removing it,
/// so a claimer that dies loses nothing: the member is due again when the lease ends. The
/// resend buffer and the job schedule are both such queues.
enum LeasedQueueScripts {
    /// Claims up to `limit` entries due at `now`: moves each one's due time to `until` (the end
    /// of the lease) and returns it with its value. A due member without a value is dropped.
    ///
    /// KEYS: the due-time ZSET, the HASH of values. ARGV: now ms, lease end ms, limit.
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
    /// KEYS: the due-time ZSET, the HASH of values. ARGV: members. Returns `{1 or 0, …}`: whether each was present.
    static let remove = RedisScript(
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
