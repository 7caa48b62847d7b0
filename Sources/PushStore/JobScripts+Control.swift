import Redis

extension JobScripts {
    // MARK: - Job control

    /// Writes a job's control state over the version it was computed from (compare and set):
    /// the rules of ``JobControl`` run in Swift, this script only refuses a write that lost a
    /// race. When the new gate is `discard` the held registry changes are dropped and counted
    /// (`effects-discarded`); a cancel also sets `cancel-requested` once (`HSETNX`), which
    /// workers of earlier versions read. Refreshes the TTLs.
    ///
    /// KEYS: control, stats, held. ARGV: expected version (`0` for a job never changed), TTL ms,
    /// cancel time ms or `""`, then pairs of field, value (`""` deletes the field).
    /// Returns 1 when written, 0 when the stored version differs.
    static let writeControl = RedisScript(
        """
        local stored = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
        if stored ~= tonumber(ARGV[1]) then
          return 0
        end
        local gate
        for i = 4, #ARGV, 2 do
          if ARGV[i + 1] == '' then
            redis.call('HDEL', KEYS[1], ARGV[i])
          else
            redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
          end
          if ARGV[i] == 'gate' then
            gate = ARGV[i + 1]
          end
        end
        redis.call('PEXPIRE', KEYS[1], ARGV[2])
        if gate == 'discard' then
          local held = redis.call('LLEN', KEYS[3])
          if held > 0 then
            redis.call('HINCRBY', KEYS[2], 'effects-discarded', held)
            redis.call('DEL', KEYS[3])
          end
        end
        if ARGV[3] ~= '' then
          redis.call('HSETNX', KEYS[2], 'cancel-requested', ARGV[3])
        end
        if redis.call('EXISTS', KEYS[2]) == 1 then
          redis.call('PEXPIRE', KEYS[2], ARGV[2])
        end
        return 1
        """
    )

    /// Offers registry changes (serialised `push.feedback` events) under the job's gate: held
    /// (appended to the job's list) while the gate is `hold` or not set yet (a new job is
    /// watched), dropped and counted under `discard`, left to the caller under `apply`.
    ///
    /// KEYS: control, stats, held. ARGV: TTL ms, then the events.
    /// Returns `{gate, held changes still waiting, state}`; under `apply` the caller publishes
    /// the events itself and, when changes are still waiting, releases them
    /// (``takeHeldEffects``).
    static let offerEffects = RedisScript(
        """
        local control = redis.call('HMGET', KEYS[1], 'gate', 'state')
        local gate = control[1] or 'hold'
        local state = control[2] or 'running'
        local count = #ARGV - 1
        if gate == 'discard' then
          if count > 0 then
            redis.call('HINCRBY', KEYS[2], 'effects-discarded', count)
            redis.call('PEXPIRE', KEYS[2], ARGV[1])
          end
          return {gate, 0, state}
        end
        if gate == 'hold' then
          if count > 0 then
            redis.call('RPUSH', KEYS[3], unpack(ARGV, 2))
            redis.call('PEXPIRE', KEYS[3], ARGV[1])
          end
          return {gate, redis.call('LLEN', KEYS[3]), state}
        end
        return {gate, redis.call('LLEN', KEYS[3]), state}
        """
    )

    /// Takes up to `limit` held registry changes for the caller to publish, only while the
    /// job's gate is `apply` (so nothing held is released for a job that is watched, paused or
    /// cancelled).
    ///
    /// KEYS: control, held. ARGV: limit. Returns the events (an empty list when none or not
    /// applying).
    static let takeHeldEffects = RedisScript(
        """
        if redis.call('HGET', KEYS[1], 'gate') ~= 'apply' then
          return {}
        end
        return redis.call('LPOP', KEYS[2], ARGV[1]) or {}
        """
    )
}
