import Redis

/// The Lua script of the rate limiter; it runs inside one app's rate slot `{<app>:rate}`,
/// atomically, on the Redis server's clock (`TIME`), so every worker of the fleet shares it.
/// `schemas/redis.md` describes the key.
enum RateScripts {
    /// Token bucket: refills the bucket at `rate` per second since its last update (up to
    /// `burst`; a missing bucket is full), grants `min(requested, floor(tokens))` and stores the
    /// rest as a float. The key expires once the bucket would be full again (an absent bucket
    /// is a full one), plus a second.
    ///
    /// Effects replication (the default since Redis 5) replicates the `HSET`, not `TIME`.
    ///
    /// KEYS: bucket. ARGV: rate per second, burst, requested.
    /// Returns `{granted, µs until the missing permits accrue (0 when all were granted)}`.
    static let acquire = RedisScript(
        """
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
        local rate, burst, requested = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
        local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
        local tokens, at = tonumber(state[1]), tonumber(state[2])
        if tokens == nil or at == nil then
          tokens, at = burst, now
        elseif now > at then
          tokens = tokens + (now - at) * rate / 1000000
          at = now
        end
        if tokens > burst then
          tokens = burst
        end
        if tokens < 0 then
          tokens = 0
        end
        local granted = math.min(requested, math.floor(tokens))
        tokens = tokens - granted
        local limit = 2 ^ 52
        local wait = 0
        if granted < requested then
          wait = math.min(math.ceil((requested - granted - tokens) * 1000000 / rate), limit)
        end
        redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'at', string.format('%.0f', at))
        redis.call('PEXPIRE', KEYS[1], math.min(math.ceil((burst - tokens) * 1000 / rate) + 1000, 2 ^ 40))
        return {granted, wait}
        """
    )
}
