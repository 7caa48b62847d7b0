import Redis

/// The Lua scripts of the job store and the job schedule. A job's scripts run inside the job's
/// hash slot `{job:<jobID>}`, the schedule's inside `{schedule}`, atomically; `schemas/redis.md`
/// describes the keys they touch.
enum JobScripts {
    // MARK: - Job store

    /// Records a published chunk once: `HSETNX` on the chunks hash; only when the chunk is new
    /// are `chunks` (+1) and `expanded` (+token count) incremented. Refreshes both TTLs.
    ///
    /// KEYS: chunks, stats. ARGV: chunk id, token count, TTL ms, and optionally one more counter
    /// to add the token count to when the chunk is new (a parked chunk's slot).
    /// Returns 1 if the chunk was new, else 0.
    static let recordChunk = RedisScript(
        """
        local new = redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
        if new == 1 then
          redis.call('HINCRBY', KEYS[2], 'chunks', 1)
          redis.call('HINCRBY', KEYS[2], 'expanded', ARGV[2])
          if ARGV[4] then redis.call('HINCRBY', KEYS[2], ARGV[4], ARGV[2]) end
        end
        redis.call('PEXPIRE', KEYS[1], ARGV[3])
        redis.call('PEXPIRE', KEYS[2], ARGV[3])
        return new
        """
    )

    /// Adds to counters (`HINCRBY` each) and refreshes the TTL.
    ///
    /// KEYS: stats. ARGV: TTL ms, then pairs of counter name, increment.
    /// Returns the number of counters changed.
    static let increment = RedisScript(
        """
        for i = 2, #ARGV, 2 do
          redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
        end
        redis.call('PEXPIRE', KEYS[1], ARGV[1])
        return (#ARGV - 1) / 2
        """
    )

    /// Adds a resend tally's counts (`HINCRBY`) unless its id was applied before, and refreshes
    /// both keys' TTL.
    ///
    /// KEYS: stats, applied tallies. ARGV: TTL ms, the tally id, then pairs of counter name,
    /// value. Returns 1 when it counted, 0 when the tally was applied already.
    static let applyTally = RedisScript(
        """
        if redis.call('SADD', KEYS[2], ARGV[2]) == 0 then
          return 0
        end
        for i = 3, #ARGV, 2 do
          redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
        end
        redis.call('PEXPIRE', KEYS[1], ARGV[1])
        redis.call('PEXPIRE', KEYS[2], ARGV[1])
        return 1
        """
    )

    /// Sets counters (`HSET`) and refreshes the TTL.
    ///
    /// KEYS: stats. ARGV: TTL ms, then pairs of counter name, value.
    /// Returns the number of counters that did not exist before.
    static let set = RedisScript(
        """
        local added = 0
        for i = 2, #ARGV, 2 do
          added = added + redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
        end
        redis.call('PEXPIRE', KEYS[1], ARGV[1])
        return added
        """
    )

    /// Sets one counter unless it is set already (`HSETNX`), refreshes the TTL, and returns the
    /// counter's value now: the first caller's, whoever asks.
    ///
    /// KEYS: stats. ARGV: TTL ms, counter name, value.
    /// Returns the stored value, as a string.
    static let setOnce = RedisScript(
        """
        redis.call('HSETNX', KEYS[1], ARGV[2], ARGV[3])
        redis.call('PEXPIRE', KEYS[1], ARGV[1])
        return redis.call('HGET', KEYS[1], ARGV[2])
        """
    )

    /// Records final outcomes in one range of a job's sent state: for each outcome sets the
    /// position's bit and, only if it was not set, counts the outcome's counter (and `sent`
    /// when its flag is not `0`). A position listed twice counts once: the first outcome wins.
    /// Increments are summed per counter and written once each. Refreshes both TTLs. The bits
    /// are set by one `BITFIELD` per 900 outcomes (its `SET`s run in order and answer each
    /// bit's previous value), not one `SETBIT` each: a command call costs Redis more than a bit.
    /// 900, not more: with the refused bits a call has up to 7,200 arguments, and Lua's `unpack`
    /// takes fewer than 8,000. (A settle batch holds at most 250 outcomes.) The bits' values go to
    /// `BITFIELD` as strings: Redis 7.0 formats every number a script passes with `snprintf`.
    ///
    /// An outcome other than APNs's acceptance (flag `0` or `1`) also sets the position's refused
    /// bit, at offset 65,536 + its marker's, in the same `BITFIELD`; an accepted one (flag `2`)
    /// adds nothing, so the common case costs what it did before the bits existed. A recall goes
    /// to the positions with a marker and no refused bit (``JobStore/wasAccepted(jobID:positions:)``):
    /// the devices that got the notification. When a position's outcome comes a second time (a
    /// chunk delivered again), the device got it if either send was accepted: an accepted second
    /// outcome clears the refused bit, and a refused second outcome clears the one it just set when
    /// the first was accepted (the bit was clear). Those rare repairs are a second `BITFIELD`.
    ///
    /// KEYS: the range's bitmap, the range's stats. ARGV: TTL ms, then triples of bit offset,
    /// counter name, flag (`0`: not sent; `1`: sent, not accepted; `2`: sent and accepted).
    /// Returns the number of new markers.
    static let recordOutcomes = RedisScript(
        """
        local counts, order = {}, {}
        local new, sent = 0, 0
        local outcomes = (#ARGV - 1) / 3
        for first = 0, outcomes - 1, 900 do
          local last = math.min(first + 900, outcomes) - 1
          local operations, refused = {}, {}
          for k = first, last do
            operations[#operations + 1] = 'SET'
            operations[#operations + 1] = 'u1'
            operations[#operations + 1] = ARGV[2 + 3 * k]
            operations[#operations + 1] = '1'
          end
          local answers = last - first + 1
          for k = first, last do
            if ARGV[4 + 3 * k] ~= '2' then
              operations[#operations + 1] = 'SET'
              operations[#operations + 1] = 'u1'
              operations[#operations + 1] = 65536 + tonumber(ARGV[2 + 3 * k])
              operations[#operations + 1] = '1'
              answers = answers + 1
              refused[k] = answers
            end
          end
          local before = redis.call('BITFIELD', KEYS[1], unpack(operations))
          local repairs = {}
          for k = first, last do
            local i = 2 + 3 * k
            if before[k - first + 1] == 0 then
              new = new + 1
              local counter = ARGV[i + 1]
              if counts[counter] == nil then
                counts[counter] = 0
                order[#order + 1] = counter
              end
              counts[counter] = counts[counter] + 1
              if ARGV[i + 2] ~= '0' then
                sent = sent + 1
              end
            elseif ARGV[i + 2] == '2' or before[refused[k]] == 0 then
              repairs[#repairs + 1] = 'SET'
              repairs[#repairs + 1] = 'u1'
              repairs[#repairs + 1] = 65536 + tonumber(ARGV[i])
              repairs[#repairs + 1] = '0'
            end
          end
          if #repairs > 0 then
            redis.call('BITFIELD', KEYS[1], unpack(repairs))
          end
        end
        for _, counter in ipairs(order) do
          redis.call('HINCRBY', KEYS[2], counter, counts[counter])
        end
        if sent > 0 then
          redis.call('HINCRBY', KEYS[2], 'sent', sent)
        end
        redis.call('PEXPIRE', KEYS[1], ARGV[1])
        redis.call('PEXPIRE', KEYS[2], ARGV[1])
        return new
        """
    )

    /// Counts devices' receipts once each: `SADD` of each token to the event's set; the event's
    /// counter is incremented by the tokens that were new. Refreshes both TTLs.
    ///
    /// KEYS: the event's receipts set, stats. ARGV: counter name, TTL ms, then binary tokens.
    /// Returns how many receipts were new.
    static let recordReceipt = RedisScript(
        """
        local new = 0
        for i = 3, #ARGV do
          new = new + redis.call('SADD', KEYS[1], ARGV[i])
        end
        if new > 0 then
          redis.call('HINCRBY', KEYS[2], ARGV[1], new)
        end
        redis.call('PEXPIRE', KEYS[1], ARGV[2])
        redis.call('PEXPIRE', KEYS[2], ARGV[2])
        return new
        """
    )

    /// Takes or extends a chunk's lease: when the lease is free or already `holder`'s, it is
    /// (re)set to `holder` for the lease time; another holder's live lease is left alone.
    ///
    /// KEYS: the chunk's lease. ARGV: holder, lease ms.
    /// Returns 1 when `holder` holds the lease now, else 0.
    static let leaseChunk = RedisScript(
        """
        local current = redis.call('GET', KEYS[1])
        if current and current ~= ARGV[1] then
          return 0
        end
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
        return 1
        """
    )

    /// Ends a chunk's lease if `holder` still holds it.
    ///
    /// KEYS: the chunk's lease. ARGV: holder. Returns 1 if it was released, 0 if not held.
    static let releaseChunk = RedisScript(
        """
        if redis.call('GET', KEYS[1]) == ARGV[1] then
          return redis.call('DEL', KEYS[1])
        end
        return 0
        """
    )

    // MARK: - Job schedule

    /// Adds or replaces a scheduled job.
    ///
    /// KEYS: schedule due, schedule jobs. ARGV: job id, due ms, JSON. Returns 1 if it was new.
    static let schedule = RedisScript(
        """
        redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
        return redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
        """
    )

}
