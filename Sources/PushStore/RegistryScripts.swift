import Redis

/// The Lua scripts of the registry. Each runs inside one shard's hash slot (or one openid's),
/// atomically; `schemas/redis.md` describes the keys they touch.
enum RegistryScripts {
    /// Bind, shard part. Records the token in its environment's set (and out of the other, and
    /// out of both suspect sets: a device that binds again is trusted again), sets `env` and
    /// `at`, adds the tags, and when an openid is given gives the binding a new generation.
    ///
    /// KEYS: device, device tags, tokens:sandbox, tokens:production, tag counts, sequence,
    ///       suspect:sandbox, suspect:production, then one tag key per tag.
    /// ARGV: token, environment, registered-at ms, openid (`""` keeps the current one), tags…
    /// Returns `{previous openid or "", previous generation or 0, new generation or 0}`.
    static let bind = RedisScript(
        """
        local token, env = ARGV[1], ARGV[2]
        if env == 'production' then
          redis.call('SREM', KEYS[3], token)
          redis.call('SADD', KEYS[4], token)
        else
          redis.call('SREM', KEYS[4], token)
          redis.call('SADD', KEYS[3], token)
        end
        redis.call('SREM', KEYS[7], token)
        redis.call('SREM', KEYS[8], token)
        redis.call('HDEL', KEYS[1], 'suspect', 'suspect-at')
        redis.call('HSET', KEYS[1], 'env', env, 'at', ARGV[3])
        for i = 5, #ARGV do
          if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then
            redis.call('SADD', KEYS[i + 4], token)
            redis.call('HINCRBY', KEYS[5], ARGV[i], 1)
          end
        end
        if ARGV[4] == '' then
          return {'', 0, 0}
        end
        local previous = redis.call('HMGET', KEYS[1], 'openid', 'gen')
        local gen = redis.call('INCR', KEYS[6])
        redis.call('HSET', KEYS[1], 'openid', ARGV[4], 'gen', gen)
        return {previous[1] or '', tonumber(previous[2] or '0'), gen}
        """
    )

    /// Unbind, shard part, optionally conditional (the feedback worker's removal). Removes the
    /// token from its environment set and every tag set, updates the tag counts and deletes the
    /// device's keys. Tag keys are built from the shard's tag prefix: same hash tag, same slot.
    ///
    /// KEYS: device, device tags, tokens:sandbox, tokens:production, tag counts,
    ///       suspect:sandbox, suspect:production.
    /// ARGV: token, tag key prefix, required environment (`""`: any), invalid-since ms (`-1`:
    ///       unconditional; otherwise removed only if registered-at ≤ it).
    /// Returns `{1 if removed else 0, openid or "", generation or 0}`.
    static let unbind = RedisScript(
        """
        local record = redis.call('HMGET', KEYS[1], 'env', 'at', 'openid', 'gen')
        if not record[1] then
          return {0, '', 0}
        end
        if ARGV[3] ~= '' and record[1] ~= ARGV[3] then
          return {0, '', 0}
        end
        local since = tonumber(ARGV[4])
        if since >= 0 and tonumber(record[2]) > since then
          return {0, '', 0}
        end
        local token = ARGV[1]
        redis.call('SREM', KEYS[3], token)
        redis.call('SREM', KEYS[4], token)
        redis.call('SREM', KEYS[6], token)
        redis.call('SREM', KEYS[7], token)
        for _, tag in ipairs(redis.call('SMEMBERS', KEYS[2])) do
          redis.call('SREM', ARGV[2] .. tag, token)
          if redis.call('HINCRBY', KEYS[5], tag, -1) <= 0 then
            redis.call('HDEL', KEYS[5], tag)
          end
        end
        redis.call('DEL', KEYS[1], KEYS[2])
        return {1, record[3] or '', tonumber(record[4] or '0')}
        """
    )

    /// Adds tags to a registered device.
    ///
    /// KEYS: device, device tags, tag counts, then one tag key per tag. ARGV: token, tags…
    /// Returns the number of tags the device did not have, or -1 if it is not registered.
    static let addTags = RedisScript(
        """
        if redis.call('EXISTS', KEYS[1]) == 0 then
          return -1
        end
        local added = 0
        for i = 2, #ARGV do
          if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then
            redis.call('SADD', KEYS[i + 2], ARGV[1])
            redis.call('HINCRBY', KEYS[3], ARGV[i], 1)
            added = added + 1
          end
        end
        return added
        """
    )

    /// Removes tags from a registered device.
    ///
    /// KEYS: device, device tags, tag counts, then one tag key per tag. ARGV: token, tags…
    /// Returns the number of tags the device had, or -1 if it is not registered.
    static let removeTags = RedisScript(
        """
        if redis.call('EXISTS', KEYS[1]) == 0 then
          return -1
        end
        local removed = 0
        for i = 2, #ARGV do
          if redis.call('SREM', KEYS[2], ARGV[i]) == 1 then
            redis.call('SREM', KEYS[i + 2], ARGV[1])
            if redis.call('HINCRBY', KEYS[3], ARGV[i], -1) <= 0 then
              redis.call('HDEL', KEYS[3], ARGV[i])
            end
            removed = removed + 1
          end
        end
        return removed
        """
    )

    /// Reads a device consistently. KEYS: device, device tags.
    /// Returns `{env, at, openid or "", {tags…}, suspect reason or "", suspect-at or ""}`, or
    /// null if the device is not registered.
    static let readDevice = RedisScript(
        """
        local record = redis.call('HMGET', KEYS[1], 'env', 'at', 'openid', 'suspect', 'suspect-at')
        if not record[1] then
          return false
        end
        return {record[1], record[2], record[3] or '', redis.call('SMEMBERS', KEYS[2]), record[4] or '', record[5] or ''}
        """
    )

    /// Keeps a token aside as suspect: moves it from its environment's set to the suspect set,
    /// so no broadcast, tag or openid audience reaches it, and records why. Only a device still
    /// registered in `env`, not registered again after `at`, and not suspect already.
    ///
    /// KEYS: device, tokens:<env>, suspect:<env>. ARGV: token, env, reason, at (ms).
    /// Returns 1 if the token was marked now, else 0.
    static let markSuspect = RedisScript(
        """
        local record = redis.call('HMGET', KEYS[1], 'env', 'at', 'suspect')
        if record[1] ~= ARGV[2] or record[3] or tonumber(record[2]) > tonumber(ARGV[4]) then
          return 0
        end
        redis.call('SREM', KEYS[2], ARGV[1])
        redis.call('SADD', KEYS[3], ARGV[1])
        redis.call('HSET', KEYS[1], 'suspect', ARGV[3], 'suspect-at', ARGV[4])
        return 1
        """
    )

    /// Returns a suspect token to its environment's set (an operator's decision).
    ///
    /// KEYS: device, tokens:sandbox, tokens:production, suspect:sandbox, suspect:production.
    /// ARGV: token. Returns 1 if the token was suspect, else 0.
    static let restoreSuspect = RedisScript(
        """
        local record = redis.call('HMGET', KEYS[1], 'env', 'suspect')
        if not record[1] or not record[2] then
          return 0
        end
        if record[1] == 'production' then
          redis.call('SREM', KEYS[5], ARGV[1])
          redis.call('SADD', KEYS[3], ARGV[1])
        else
          redis.call('SREM', KEYS[4], ARGV[1])
          redis.call('SADD', KEYS[2], ARGV[1])
        end
        redis.call('HDEL', KEYS[1], 'suspect', 'suspect-at')
        return 1
        """
    )

    /// Moves a device to the other environment (APNs accepted its token there): out of the old
    /// environment's token and suspect sets, into the new one's token set, `env` updated, the
    /// suspect mark cleared. Only a device still registered in `from` and not registered again
    /// after `at`.
    ///
    /// KEYS: device, tokens:<from>, suspect:<from>, tokens:<to>. ARGV: token, from, to, at (ms).
    /// Returns 1 if the device was moved, else 0.
    static let moveEnvironment = RedisScript(
        """
        local record = redis.call('HMGET', KEYS[1], 'env', 'at')
        if record[1] ~= ARGV[2] or tonumber(record[2]) > tonumber(ARGV[4]) then
          return 0
        end
        redis.call('SREM', KEYS[2], ARGV[1])
        redis.call('SREM', KEYS[3], ARGV[1])
        redis.call('SADD', KEYS[4], ARGV[1])
        redis.call('HSET', KEYS[1], 'env', ARGV[3])
        redis.call('HDEL', KEYS[1], 'suspect', 'suspect-at')
        return 1
        """
    )

    /// Bind, openid part: points the openid at `token`'s binding `generation` unless it already
    /// points at a newer binding of the same token (last writer wins otherwise).
    ///
    /// KEYS: openid. ARGV: token, generation.
    /// Returns the displaced value `"<token>:<generation>"`, or `""` if nothing was displaced.
    static let claimOpenID = RedisScript(
        """
        local current = redis.call('GET', KEYS[1])
        if current then
          local separator = string.find(current, ':', 1, true)
          if separator and string.sub(current, 1, separator - 1) == ARGV[1]
             and tonumber(string.sub(current, separator + 1)) >= tonumber(ARGV[2]) then
            return ''
          end
        end
        redis.call('SET', KEYS[1], ARGV[1] .. ':' .. ARGV[2])
        return current or ''
        """
    )

    /// Deletes an openid's mapping if it still points at `token` with a generation ≤ the given
    /// one (a newer binding of the same token, or another token, is left alone).
    ///
    /// KEYS: openid. ARGV: token, generation. Returns 1 if deleted, else 0.
    static let releaseOpenID = RedisScript(
        """
        local current = redis.call('GET', KEYS[1])
        if not current then
          return 0
        end
        local separator = string.find(current, ':', 1, true)
        if separator and string.sub(current, 1, separator - 1) == ARGV[1]
           and tonumber(string.sub(current, separator + 1)) <= tonumber(ARGV[2]) then
          redis.call('DEL', KEYS[1])
          return 1
        end
        return 0
        """
    )

    /// Clears a device's openid if it is still the given openid at a generation ≤ the given one
    /// (the device was displaced from that openid by another device's login).
    ///
    /// KEYS: device. ARGV: openid, generation. Returns 1 if cleared, else 0.
    static let detachOpenID = RedisScript(
        """
        local record = redis.call('HMGET', KEYS[1], 'openid', 'gen')
        if record[1] == ARGV[1] and tonumber(record[2]) <= tonumber(ARGV[2]) then
          redis.call('HDEL', KEYS[1], 'openid', 'gen')
          return 1
        end
        return 0
        """
    )

    /// Materialises a tag audience: tokens of the environment set that are in every `all` set,
    /// in at least one `any` set (if any) and in no `none` set, into KEYS[1] with a TTL.
    ///
    /// KEYS: destination, scratch, tokens:<environment>, all tag keys…, any tag keys…, none tag keys….
    /// ARGV: count of all, count of any, count of none, TTL ms. Returns the number of tokens.
    static let tagAudience = RedisScript(
        """
        local allCount, anyCount, noneCount = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
        local index = 4
        local intersect = {KEYS[3]}
        for _ = 1, allCount do
          intersect[#intersect + 1] = KEYS[index]
          index = index + 1
        end
        if anyCount > 0 then
          local union = {}
          for _ = 1, anyCount do
            union[#union + 1] = KEYS[index]
            index = index + 1
          end
          redis.call('SUNIONSTORE', KEYS[2], unpack(union))
          intersect[#intersect + 1] = KEYS[2]
        end
        redis.call('SINTERSTORE', KEYS[1], unpack(intersect))
        if anyCount > 0 then
          redis.call('DEL', KEYS[2])
        end
        if noneCount > 0 then
          local difference = {KEYS[1]}
          for _ = 1, noneCount do
            difference[#difference + 1] = KEYS[index]
            index = index + 1
          end
          redis.call('SDIFFSTORE', KEYS[1], unpack(difference))
        end
        local count = redis.call('SCARD', KEYS[1])
        if count > 0 then
          redis.call('PEXPIRE', KEYS[1], ARGV[4])
        end
        return count
        """
    )
}
