import Redis

/// The Lua scripts of the registry. Each runs inside one shard's hash slot (or one openid's, or
/// the app's), atomically; `schemas/redis.md` describes the keys they touch.
///
/// The rules of the registry (what a bind, unbind, tag change, removal or suspect mark does to a
/// device) run in Swift on decoded records (``PackedDevice``); ``applyPatches`` only writes a
/// shard's new records over the ones they were computed from, and counts.
enum RegistryScripts {
    /// Lua: adds `change` to a counter target: `n:<field>` of the counts (KEYS[1]) or
    /// `t:<tag id>` of the tag counts (KEYS[2]), deleting a tag count's field at 0.
    private static let applyCountChange = """
        local function applyCountChange(target, change)
          if string.sub(target, 1, 1) == 'n' then
            redis.call('HINCRBY', KEYS[1], string.sub(target, 3), change)
          elseif redis.call('HINCRBY', KEYS[2], string.sub(target, 3), change) <= 0 then
            redis.call('HDEL', KEYS[2], string.sub(target, 3))
          end
        end
        """

    /// Reads device records of one shard, with the layout epoch the shard belongs to.
    ///
    /// KEYS: counts, then the bucket keys the tokens name by index.
    /// ARGV: pairs of bucket key index, binary token.
    /// Returns `{epoch, record or null…}`.
    static let readRecords = RedisScript(
        """
        local out = {tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')}
        for i = 1, #ARGV, 2 do
          out[#out + 1] = redis.call('HGET', KEYS[tonumber(ARGV[i])], ARGV[i + 1])
        end
        return out
        """
    )

    /// Reads whole buckets of one shard (a scan's page), with the shard's layout epoch.
    ///
    /// KEYS: counts, then bucket keys. Returns `{epoch, {token, record, …} per bucket…}`.
    static let readBuckets = RedisScript(
        """
        local out = {tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')}
        for i = 2, #KEYS do
          out[#out + 1] = redis.call('HGETALL', KEYS[i])
        end
        return out
        """
    )

    /// Applies patches to a shard's device records, each only if the device's record is still
    /// the one it was computed from (compare and set): writes (or deletes) the record, hands a
    /// new device its id (written into the record at byte 2; ``DeviceIDForm``) and an openid
    /// binding its generation (`n.gen`, written at the offset given), and adds the counter
    /// changes of the patches applied (`n:<field>` to the counts, `t:<tag id>` to the tag counts,
    /// whose fields are deleted at 0). The changes come as change sets listed once per call (a
    /// bulk import's devices share one), each patch naming its set.
    ///
    /// Ids: sequential, `base + (n.id:<epoch> − 1) × shards + shard`; bucketed, `2³¹ + base +`
    /// ``DeviceIDForm/offset(sequence:bucket:shard:shards:)`` (the same layers, computed here),
    /// the sequence of the patch's bucket kept as a big-endian u32 at `4 × bucket` of the
    /// shard's sequences string (KEYS[3]), and `n.id:<epoch>` the highest of them (the next
    /// epoch's base is computed from it). An offset past 2³¹ is refused (status `4`).
    ///
    /// The whole call is refused when the shard belongs to another layout epoch than the
    /// caller's. A patch is refused while its bucket is being moved by a reshard (for at most
    /// ``DeviceRegistry/fenceMilliseconds``), and a patch meant for a device's previous home
    /// (intent 1) once its bucket has moved, or when it would add a device there.
    ///
    /// KEYS: counts, tag counts, id sequences, then the bucket keys the patches name by index.
    /// ARGV: shard count, shard, id base, epoch, lowest generation (raises `n.gen` to it), fence
    ///       ms, id form (0 sequential, 1 bucketed), change set count, then per set its pair
    ///       count and that many pairs of target, change; last, the patches, packed back to back
    ///       (``DeviceRegistry/Patch/pack(into:)``, little-endian): bucket key index (u16), bucket
    ///       number (u16), intent (u8; 0: the device's home, 1: its previous home), flags (u8; 1:
    ///       assign id, 2: assign generation), generation offset (u16), change set (u16, 1-based;
    ///       0: none), then the binary token (u8 length), the expected record (u16 length; empty:
    ///       none) and the new record (u16 length; empty: delete).
    /// Returns `{-1}` when the epoch differs, else `{1, statuses, ids, first generation,
    /// current…}`: one status byte per patch (`1` applied, `0` the record changed meanwhile, `2`
    /// its bucket is being moved, `3` it belongs in the device's new home, `4` no id is left in
    /// its bucket); the ids handed out, u32 little-endian, in the order of their patches; the
    /// generation before the first patch (applied patches take the next ones in order); and for
    /// each `0`, the record now (`""`: none).
    static let applyPatches = RedisScript(
        applyCountChange + "\n" + """
            local shards, shard, base, epoch = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
            local bucketed = ARGV[7] == '1'
            local sequenceField = 'id:' .. ARGV[4]
            local meta = redis.call('HMGET', KEYS[1], 'epoch', 'moved', 'fence', 'fence-at', 'gen', sequenceField)
            if tonumber(meta[1] or '0') ~= epoch then
              return {-1}
            end
            local moved = tonumber(meta[2] or '0')
            local fence = -1
            if meta[3] then
              local clock = redis.call('TIME')
              local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
              if now < tonumber(meta[4] or '0') + tonumber(ARGV[6]) then
                fence = tonumber(meta[3])
              end
            end
            local gen = tonumber(meta[5] or '0')
            if tonumber(ARGV[5]) > gen then
              gen = tonumber(ARGV[5])
              redis.call('HSET', KEYS[1], 'gen', gen)
            end
            local firstGen = gen
            local sequence = tonumber(meta[6] or '0')
            local firstSequence = sequence
            local stored, bucketSequences, touched = nil, {}, {}
            -- The id the next new device of bucket `number` gets (nil when none is left), and
            -- `takeID`, which hands it out: an id is only taken once its device is written.
            local function sequenceOf(number)
              local current = bucketSequences[number]
              if current == nil then
                if stored == nil then
                  stored = redis.call('GET', KEYS[3]) or ''
                end
                current = 0
                if #stored >= 4 * number + 4 then
                  current = struct.unpack('>I4', stored, 4 * number + 1)
                end
              end
              return current
            end
            local function nextID(number)
              if not bucketed then
                return base + sequence * shards + shard
              end
              local current = sequenceOf(number)
              local before, slots = 0, 8
              while current >= before + slots do
                before = before + slots
                slots = slots * 2
              end
              local offset = base + shards * 1024 * before + (shard * 1024 + number) * slots + (current - before)
              if offset >= 2147483648 then
                return nil
              end
              return 2147483648 + offset
            end
            local function takeID(number)
              if not bucketed then
                sequence = sequence + 1
                return
              end
              local current = sequenceOf(number)
              if bucketSequences[number] == nil then
                touched[#touched + 1] = number
              end
              bucketSequences[number] = current + 1
              if current + 1 > sequence then
                sequence = current + 1
              end
            end
            local sets, applied = {}, {}
            local i = 9
            for s = 1, tonumber(ARGV[8]) do
              local pairCount = tonumber(ARGV[i])
              sets[s] = {i + 1, pairCount}
              applied[s] = 0
              i = i + 1 + 2 * pairCount
            end
            local packed = ARGV[#ARGV]
            local statuses, ids, out = {}, {}, {1, '', '', firstGen}
            local position = 1
            while position <= #packed do
              local keyIndex, number, intent, flags, genOffset, set, token, expected, record, nextPosition =
                struct.unpack('<HHBBHHBc0Hc0Hc0', packed, position)
              position = nextPosition
              if number == fence then
                statuses[#statuses + 1] = '2'
              elseif intent == 1 and (number < moved or (expected == '' and record ~= '')) then
                statuses[#statuses + 1] = '3'
              else
                local bucket = KEYS[keyIndex]
                -- A new device is added with HSETNX: one pass over the bucket's listpack, not two.
                local adding = expected == '' and record ~= ''
                local current = ''
                if not adding then
                  current = redis.call('HGET', bucket, token) or ''
                end
                local id = 0
                if current == expected and record ~= '' and flags % 2 == 1 then
                  id = nextID(number)
                end
                if current ~= expected then
                  statuses[#statuses + 1] = '0'
                  out[#out + 1] = current
                elseif id == nil then
                  statuses[#statuses + 1] = '4'
                else
                  local written = true
                  if record == '' then
                    if current ~= '' then redis.call('HDEL', bucket, token) end
                  else
                    if flags % 2 == 1 then
                      record = struct.pack('<c2I4c0', record, id, string.sub(record, 7))
                    end
                    if math.floor(flags / 2) % 2 == 1 then
                      record = string.sub(record, 1, genOffset) .. struct.pack('<I4', gen + 1) .. string.sub(record, genOffset + 5)
                    end
                    if adding then
                      written = redis.call('HSETNX', bucket, token, record) == 1
                    else
                      redis.call('HSET', bucket, token, record)
                    end
                  end
                  if written then
                    if flags % 2 == 1 and record ~= '' then
                      takeID(number)
                      ids[#ids + 1] = id
                    end
                    if math.floor(flags / 2) % 2 == 1 and record ~= '' then
                      gen = gen + 1
                    end
                    if set > 0 then
                      applied[set] = applied[set] + 1
                    end
                    statuses[#statuses + 1] = '1'
                  else
                    -- Registered already: compute the change again from its record.
                    statuses[#statuses + 1] = '0'
                    out[#out + 1] = redis.call('HGET', bucket, token) or ''
                  end
                end
              end
            end
            if #touched > 0 then
              -- The sequences written again whole, each touched one packed in its place and the
              -- bytes between copied (zeros past the old end): no number is formatted, as a
              -- BITFIELD of offsets and values would (Redis 7.0 formats each with snprintf).
              table.sort(touched)
              local pieces, copied = {}, 0
              for _, number in ipairs(touched) do
                local offset = 4 * number
                if offset > copied then
                  local kept = string.sub(stored, copied + 1, offset)
                  pieces[#pieces + 1] = kept
                  if #kept < offset - copied then
                    pieces[#pieces + 1] = string.rep('\\0', offset - copied - #kept)
                  end
                end
                pieces[#pieces + 1] = struct.pack('>I4', bucketSequences[number])
                copied = offset + 4
              end
              pieces[#pieces + 1] = string.sub(stored, copied + 1)
              redis.call('SET', KEYS[3], table.concat(pieces))
            end
            if sequence ~= firstSequence then
              redis.call('HSET', KEYS[1], sequenceField, sequence)
            end
            if gen ~= firstGen then
              redis.call('HSET', KEYS[1], 'gen', gen)
            end
            local sums, order = {}, {}
            for s, times in ipairs(applied) do
              if times > 0 then
                local first, count = sets[s][1], sets[s][2]
                for p = 0, count - 1 do
                  local target = ARGV[first + 2 * p]
                  if sums[target] == nil then
                    sums[target] = 0
                    order[#order + 1] = target
                  end
                  sums[target] = sums[target] + times * tonumber(ARGV[first + 2 * p + 1])
                end
              end
            end
            for _, target in ipairs(order) do
              if sums[target] ~= 0 then
                applyCountChange(target, sums[target])
              end
            end
            out[2] = table.concat(statuses)
            -- The ids packed a thousand at a time, not one string each.
            local packedIDs = {}
            for first = 1, #ids, 1000 do
              local last = math.min(first + 999, #ids)
              packedIDs[#packedIDs + 1] = struct.pack('<' .. string.rep('I4', last - first + 1), unpack(ids, first, last))
            end
            out[3] = table.concat(packedIDs)
            return out
            """
    )

    // MARK: - Reshard

    /// Moves a shard into a new layout epoch: a shard devices will move out of gets `to`
    /// (the new count) and `moved` = 0; a new shard (still empty) only the epoch. From then on, callers of
    /// the old epoch are refused (``applyPatches``), so no device id of the old epoch is handed
    /// out any more, and the shard's bucket id sequences are deleted: the new epoch's ids start
    /// again from a base above the old ones. Idempotent.
    ///
    /// KEYS: counts, id sequences. ARGV: old epoch, new epoch, new shard count (0 for a new shard).
    /// Returns the shard's id sequence of the old epoch (bucketed: the highest of its buckets'),
    /// or -1 when the shard is in neither epoch.
    static let enterEpoch = RedisScript(
        """
        if ARGV[3] == '0' then
          redis.call('HSET', KEYS[1], 'epoch', ARGV[2])
          return 0
        end
        local current = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0')
        if current ~= tonumber(ARGV[2]) then
          if current ~= tonumber(ARGV[1]) then
            return -1
          end
          redis.call('HSET', KEYS[1], 'epoch', ARGV[2], 'to', ARGV[3], 'moved', 0)
          redis.call('DEL', KEYS[2])
        end
        return tonumber(redis.call('HGET', KEYS[1], 'id:' .. ARGV[1]) or '0')
        """
    )

    /// Stores a new app's layout, unless one is stored: its shard count and id form together,
    /// so that no process reads one without the other.
    ///
    /// KEYS: layout. ARGV: shard count, id form. Returns 1 if written, 0 if a layout was there.
    static let createLayout = RedisScript(
        """
        if redis.call('HEXISTS', KEYS[1], 'shards') == 1 then
          return 0
        end
        redis.call('HSET', KEYS[1], 'shards', ARGV[1], 'ids', ARGV[2])
        return 1
        """
    )

    /// Writes the app's layout if it is still in epoch `expected` (one reshard at a time).
    ///
    /// KEYS: layout. ARGV: expected epoch, `from` (`""`: none), then pairs of field, value.
    /// Returns 1 if written, 0 if the epoch differs.
    static let writeLayout = RedisScript(
        """
        if tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0') ~= tonumber(ARGV[1]) then
          return 0
        end
        for i = 3, #ARGV, 2 do
          redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
        end
        if ARGV[2] == '' then
          redis.call('HDEL', KEYS[1], 'from')
        else
          redis.call('HSET', KEYS[1], 'from', ARGV[2])
        end
        return 1
        """
    )

    /// Fences bucket `number` of a shard being resharded (writes to it wait) and returns its
    /// devices; `{1}` when the bucket has moved already.
    ///
    /// KEYS: counts, the bucket. ARGV: bucket number, epoch.
    /// Returns `{0, {token, record, …}}`, `{1}` when moved, `{-1}` when the shard is not
    /// being resharded in that epoch.
    static let fenceBucket = RedisScript(
        """
        local meta = redis.call('HMGET', KEYS[1], 'epoch', 'to', 'moved')
        if tonumber(meta[1] or '0') ~= tonumber(ARGV[2]) or not meta[2] then
          return {-1}
        end
        if tonumber(meta[3]) > tonumber(ARGV[1]) then
          return {1}
        end
        local clock = redis.call('TIME')
        local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
        redis.call('HSET', KEYS[1], 'fence', ARGV[1], 'fence-at', now)
        return {0, redis.call('HGETALL', KEYS[2])}
        """
    )

    /// Ends the move of a fenced bucket: deletes the devices that moved (each only if its
    /// record is still the one copied), takes them off the counts, marks the bucket moved and
    /// lifts the fence. All or nothing.
    ///
    /// KEYS: counts, tag counts, the bucket. ARGV: bucket number, epoch, device count, then
    /// that many pairs of binary token, record, then pairs of counter target, change (as in
    /// ``applyPatches``).
    /// Returns 1 when done, 0 when a device changed (the bucket is moved again).
    static let commitBucket = RedisScript(
        applyCountChange + "\n" + """
            local meta = redis.call('HMGET', KEYS[1], 'epoch', 'moved')
            if tonumber(meta[1] or '0') ~= tonumber(ARGV[2]) or tonumber(meta[2] or '-1') ~= tonumber(ARGV[1]) then
              return 0
            end
            local devices = tonumber(ARGV[3])
            for i = 4, 3 + 2 * devices, 2 do
              if redis.call('HGET', KEYS[3], ARGV[i]) ~= ARGV[i + 1] then
                return 0
              end
            end
            for i = 4, 3 + 2 * devices, 2 do
              redis.call('HDEL', KEYS[3], ARGV[i])
            end
            for i = 4 + 2 * devices, #ARGV, 2 do
              applyCountChange(ARGV[i], tonumber(ARGV[i + 1]))
            end
            redis.call('HSET', KEYS[1], 'moved', tonumber(ARGV[1]) + 1)
            redis.call('HDEL', KEYS[1], 'fence', 'fence-at')
            return 1
            """
    )

    /// Gives tag names their ids in the app's dictionary, new ones the next id.
    ///
    /// KEYS: tag ids (name → id), tag names (id → name), tag sequence. ARGV: the most ids, names….
    /// Returns the id of each name, or -1 for each name once the dictionary is full.
    static let ensureTagIDs = RedisScript(
        """
        local ids, limit = {}, tonumber(ARGV[1])
        for i = 2, #ARGV do
          local id = redis.call('HGET', KEYS[1], ARGV[i])
          if id then
            ids[#ids + 1] = tonumber(id)
          elseif tonumber(redis.call('GET', KEYS[3]) or '0') >= limit then
            ids[#ids + 1] = -1
          else
            local next = redis.call('INCR', KEYS[3])
            redis.call('HSET', KEYS[1], ARGV[i], next)
            redis.call('HSET', KEYS[2], next, ARGV[i])
            ids[#ids + 1] = next
          end
        end
        return ids
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

}
