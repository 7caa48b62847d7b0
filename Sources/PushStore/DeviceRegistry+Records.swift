import APNsCore
import Redis
import Synchronization

/// How every device is read and changed. A read finds each token in its home shard, or while a
/// reshard runs first in its previous home (``RegistryLayout/previousHome(of:)``), shards
/// answering with their layout epoch (a stale layout is read again). A change reads the
/// records, lets a rule compute each device's new record from its current one (a pure
/// function of the caller's), and ``RegistryScripts/applyPatches`` writes them shard by shard,
/// each only over the record it was computed from; a device changed meanwhile, moved by a
/// reshard or fenced for a moment is read and computed again.
extension DeviceRegistry {
    /// What a rule does to one device.
    enum RecordChange: Sendable {
        /// Leave it as it is.
        case keep
        /// Write this record; `newDevice` hands it an id, `newBinding` its openid binding a
        /// generation (both are written by the script).
        case write(PackedDevice, newDevice: Bool = false, newBinding: Bool = false)
        /// Remove the device.
        case delete
    }

    /// What became of one device.
    struct RecordUpdate: Sendable {
        /// The record the change was computed from (`nil`: no device).
        var old: PackedDevice?
        /// The record now (with its id and generation when they were handed out).
        var new: PackedDevice?
        /// Whether anything was written.
        var changed: Bool
    }

    /// Where a token's record was found.
    struct Located: Sendable {
        /// Its bytes; `nil` when the token is not registered.
        var bytes: [UInt8]?
        /// The shard holding it (the token's home when it is not registered).
        var shard: Int
        /// Whether that is the token's previous home (a reshard has not moved it yet).
        var atPreviousHome: Bool
    }

    /// The decoded records of `tokens`, `nil` for a token that is not registered.
    func records(app: String, tokens: [DeviceToken]) async throws -> [PackedDevice?] {
        try await withLayout(app: app) { layout in
            try await locate(app: app, tokens: tokens, layout: layout).map { try $0.bytes.map(Self.decode) }
        }
    }

    /// Finds `tokens` (see the type's notes): previous homes first, then homes, each a
    /// pipeline of one script call per shard and 500 tokens.
    ///
    /// - Throws: ``StaleLayout`` when a shard belongs to another epoch than `layout`'s.
    func locate(app: String, tokens: [DeviceToken], layout: RegistryLayout) async throws -> [Located] {
        var found = tokens.map { Located(bytes: nil, shard: layout.home(of: $0), atPreviousHome: false) }
        if layout.migratingFrom != nil {
            let moving = tokens.indices.compactMap { index in layout.previousHome(of: tokens[index]).map { (index, $0) } }
            let records = try await read(app: app, tokens: tokens, at: moving, layout: layout)
            for ((index, shard), bytes) in zip(moving, records) where bytes != nil {
                found[index] = Located(bytes: bytes, shard: shard, atPreviousHome: true)
            }
        }
        let rest = tokens.indices.filter { !found[$0].atPreviousHome }.map { ($0, found[$0].shard) }
        for ((index, _), bytes) in zip(rest, try await read(app: app, tokens: tokens, at: rest, layout: layout)) {
            found[index].bytes = bytes
        }
        return found
    }

    /// Reads the records of `tokens[index]` in `shard`, for each (index, shard) of `places`.
    private func read(app: String, tokens: [DeviceToken], at places: [(Int, Int)], layout: RegistryLayout) async throws -> [[UInt8]?] {
        guard !places.isEmpty else { return [] }
        var byShard: [Int: [Int]] = [:]
        for (position, place) in places.enumerated() {
            byShard[place.1, default: []].append(position)
        }
        var calls: [RedisScriptCall] = []
        var callPositions: [[Int]] = []
        for (shard, positions) in byShard.sorted(by: { $0.key < $1.key }) {
            let keys = ShardKeyspace(app: app, shard: shard)
            for slice in positions.batches(of: Self.patchesPerCall) {
                var bucketKeys = BucketKeys(keys)
                var arguments: [RedisArgument] = []
                arguments.reserveCapacity(2 * slice.count)
                for position in slice {
                    let token = tokens[places[position].0]
                    arguments.append(.integer(bucketKeys.index(of: ShardKeyspace.bucketIndex(of: token))))
                    arguments.append(.bytes(token.markerBytes))
                }
                calls.append(RedisScriptCall(RegistryScripts.readRecords, keys: bucketKeys.keys, arguments: arguments))
                callPositions.append(slice)
            }
        }
        var records = [[UInt8]?](repeating: nil, count: places.count)
        for (slice, reply) in zip(callPositions, try await run(calls)) {
            guard let values = reply.array, values.count == slice.count + 1, let epoch = values[0].int else {
                throw StoreError.unexpected(reply, from: "the read-records script")
            }
            guard epoch == layout.epoch else { throw StaleLayout() }
            for (position, value) in zip(slice, values.dropFirst()) where !value.isNull {
                guard let bytes = value.bytes else { throw StoreError.unexpected(reply, from: "the read-records script") }
                records[position] = bytes
            }
        }
        return records
    }

    /// Applies `rule` to each of `tokens` (index, token, current record) and writes the
    /// results, computing again the devices that changed meanwhile: ``RegistryUpdateRound``
    /// decides each round, this reads, writes and waits.
    ///
    /// - Parameter assumeAbsent: write as if no token were registered yet, without reading them
    ///   first (a bulk import of new devices: one round trip); a token that is registered is
    ///   read and computed again. Ignored while a reshard runs.
    /// - Throws: what `rule` throws; `busy` when devices stayed fenced or the layout kept
    ///   changing; `unexpectedReply` for a record that cannot be read; `RedisClientError`.
    func update(
        app: String, tokens: [DeviceToken], assumeAbsent: Bool = false, _ rule: (Int, DeviceToken, PackedDevice?) throws -> RecordChange
    ) async throws -> [RecordUpdate] {
        guard !tokens.isEmpty else { return [] }
        var layout = try await writableLayout(app: app)
        var round = RegistryUpdateRound(tokens: tokens, absentIn: assumeAbsent && layout.migratingFrom == nil ? layout : nil)
        var waits = 0
        for _ in 0..<Self.updateAttempts {
            let unread = round.unread
            if !unread.isEmpty {
                do {
                    round.found(try await locate(app: app, tokens: unread.map { tokens[$0] }, layout: layout), at: unread)
                } catch is StaleLayout {
                    round.forgetRecords()
                    layout = try await nextLayout(app: app, after: layout, waits: &waits)
                    continue
                }
            }
            let writes = try round.writes(layout: layout, rule)
            let replies = writes.isEmpty ? [] : try await run(writes.map { patchCall(app: app, shard: $0.shard, layout: layout, $0.patches) })
            switch try round.absorb(replies, to: writes) {
            case .done:
                return round.results
            case .again:
                continue
            case .staleLayout:
                layout = try await nextLayout(app: app, after: layout, waits: &waits)
            case .fenced:
                try await Task.sleep(for: Self.layoutWait(waits))
                waits += 1
            }
        }
        throw StoreError(
            .busy, field: nil, message: "\(round.pending.count) device(s) of app \(app) kept changing or stayed fenced by a reshard; try again")
    }

    /// The layout after `layout` was found stale: read again, after a short wait when it has
    /// not changed yet.
    private func nextLayout(app: String, after layout: RegistryLayout, waits: inout Int) async throws -> RegistryLayout {
        let fresh = try await refreshLayout(app: app)
        if fresh == layout {
            try await Task.sleep(for: Self.layoutWait(waits))
            waits += 1
        }
        return fresh
    }

    /// Rounds of reading and writing an ``update(app:tokens:assumeAbsent:_:)`` makes at most.
    static let updateAttempts = 32

    /// Patches per script call (a call holds its shard for its whole run).
    static let patchesPerCall = 500

    /// One device's change, as sent to ``RegistryScripts/applyPatches``.
    struct Patch: Sendable {
        var index: Int
        var token: DeviceToken
        /// The record it was computed from, as stored.
        var expected: [UInt8]?
        var change: RecordChange
        var old: PackedDevice?
        /// Whether it goes to the device's previous home (a reshard has not moved it yet).
        var atPreviousHome: Bool

        /// Whether the script hands the device an id, its openid binding a generation (written
        /// at `generationOffset` of the record).
        var flags: (newDevice: Bool, newBinding: Bool, generationOffset: Int) {
            guard case .write(let record, let newDevice, let newBinding) = change else { return (false, false, 0) }
            guard newBinding, let offset = record.generationOffset else { return (newDevice, false, 0) }
            return (newDevice, true, offset)
        }
    }

    /// What ``RegistryScripts/applyPatches`` answered for one patch.
    enum PatchResult: Equatable, Sendable {
        case applied(id: UInt32, generation: UInt32)
        /// The record is no longer the one expected: it is this now (`nil`: gone from there).
        case changed([UInt8]?)
        /// A reshard is moving its bucket.
        case fenced
        /// Its bucket moved to the device's new home.
        case moved
    }

    /// What one ``RegistryScripts/applyPatches`` call answered.
    enum PatchReply: Sendable {
        case staleLayout
        case results([PatchResult])
    }

    /// The results of ``patchCall(app:shard:layout:_:lowestGeneration:)``'s `patches`: the ids
    /// the script handed the applied new devices, and the generations the applied bindings took
    /// in order.
    ///
    /// - Throws: ``StoreError`` (`invalidArgument`, field `token`) when a bucket has no id left
    ///   for a new device (past 2³¹ bucketed offsets); `unexpectedReply`.
    static func patchResults(_ reply: RedisReply, patches: [Patch]) throws -> PatchReply {
        guard let parts = reply.array, let status = parts.first?.int else { throw StoreError.unexpected(reply, from: "the apply-patches script") }
        if status == -1 { return .staleLayout }
        guard status == 1, parts.count >= 4, let statuses = parts[1].bytes, statuses.count == patches.count,
            let ids = parts[2].bytes, let firstGeneration = parts[3].int
        else {
            throw StoreError.unexpected(reply, from: "the apply-patches script")
        }
        var idReader = PackedDevice.Reader(bytes: ids)
        var generation = Int(firstGeneration)
        var currents = parts.dropFirst(4).makeIterator()
        var results: [PatchResult] = []
        results.reserveCapacity(patches.count)
        for (patch, status) in zip(patches, statuses) {
            switch status {
            case UInt8(ascii: "1"):
                let flags = patch.flags
                var id: UInt32 = 0
                var patchGeneration = 0
                if flags.newDevice {
                    guard let next = idReader.integer(width: 4) else { throw StoreError.unexpected(reply, from: "the apply-patches script") }
                    id = UInt32(next)
                }
                if flags.newBinding {
                    generation += 1
                    patchGeneration = generation
                }
                guard let generation32 = UInt32(exactly: patchGeneration) else {
                    throw StoreError.unexpected(reply, from: "the apply-patches script")
                }
                results.append(.applied(id: id, generation: generation32))
            case UInt8(ascii: "0"):
                guard let bytes = currents.next()?.bytes else { throw StoreError.unexpected(reply, from: "the apply-patches script") }
                results.append(.changed(bytes.isEmpty ? nil : bytes))
            case UInt8(ascii: "2"): results.append(.fenced)
            case UInt8(ascii: "3"): results.append(.moved)
            case UInt8(ascii: "4"):
                throw StoreError(
                    .invalidArgument, field: "token", message: "the app has no device id left for \(patch.token.hex) in its bucket; it was not added")
            default: throw StoreError.unexpected(reply, from: "the apply-patches script")
            }
        }
        guard idReader.isAtEnd else { throw StoreError.unexpected(reply, from: "the apply-patches script") }
        return .results(results)
    }

    /// The script call writing `patches` to `shard`; `lowestGeneration` raises the shard's
    /// generation sequence first (a reshard moving bindings in).
    func patchCall(app: String, shard: Int, layout: RegistryLayout, _ patches: [Patch], lowestGeneration: UInt32 = 0) -> RedisScriptCall {
        var bucketKeys = BucketKeys(ShardKeyspace(app: app, shard: shard), writing: true)
        // The distinct counter changes, listed once: a bulk import's devices share one set.
        // Worked out once per distinct pair of what the old and new records count as.
        var sets: [[CountChange]: Int] = [:]
        var setsByCounted: [CountedPair: Int] = [:]
        var setList: [[CountChange]] = []
        var packed: [UInt8] = []
        packed.reserveCapacity(patches.count * 64)
        for patch in patches {
            let new: PackedDevice? = if case .write(let record, _, _) = patch.change { record } else { nil }
            let counted = CountedPair(old: patch.old.map(Counted.init), new: new.map(Counted.init))
            var set = 0
            if let known = setsByCounted[counted] {
                set = known
            } else {
                let changes = Self.countChanges(from: counted.old, to: counted.new)
                if !changes.isEmpty {
                    if let known = sets[changes] {
                        set = known
                    } else {
                        setList.append(changes)
                        set = setList.count
                        sets[changes] = set
                    }
                }
                setsByCounted[counted] = set
            }
            let token = patch.token.markerBytes
            let bucket = ShardKeyspace.bucketIndex(ofBytes: token)
            let flags = patch.flags
            let expected = patch.expected ?? []
            let record = new?.bytes ?? []
            func append16(_ value: Int) {
                packed.append(UInt8(truncatingIfNeeded: value))
                packed.append(UInt8(truncatingIfNeeded: value >> 8))
            }
            append16(bucketKeys.index(of: bucket))
            append16(bucket)
            packed.append(patch.atPreviousHome ? 1 : 0)
            packed.append((flags.newDevice ? 1 : 0) | (flags.newBinding ? 2 : 0))
            append16(flags.generationOffset)
            append16(set)
            packed.append(UInt8(token.count))
            packed += token
            append16(expected.count)
            packed += expected
            append16(record.count)
            packed += record
        }
        var arguments: [RedisArgument] = [
            .integer(layout.shards), .integer(shard), .integer(Int(layout.idBase)), .integer(layout.epoch), .integer(Int(lowestGeneration)),
            .integer(Self.fenceMilliseconds), .integer(layout.ids == .bucketed ? 1 : 0), .integer(setList.count),
        ]
        for changes in setList {
            arguments.append(.integer(changes.count))
            for change in changes {
                arguments.append(.string(change.target))
                arguments.append(.integer(change.amount))
            }
        }
        arguments.append(.bytes(packed))
        return RedisScriptCall(RegistryScripts.applyPatches, keys: bucketKeys.keys, arguments: arguments)
    }

    /// One change of a shard counter: `n:<field>` of the counts or `t:<tag id>` of the tag counts.
    struct CountChange: Hashable, Sendable {
        var target: String
        var amount: Int
    }

    /// What of a record its shard's counters count: its environment, whether it is suspect,
    /// its tags.
    struct Counted: Hashable {
        var environment: APNsEnvironment
        var isSuspect: Bool
        var tags: [UInt16]

        init(_ device: PackedDevice) {
            environment = device.environment
            isSuspect = device.suspicion != nil
            tags = device.tags
        }
    }

    /// What the old and new records of a change count as.
    struct CountedPair: Hashable {
        var old: Counted?
        var new: Counted?
    }

    /// How a shard's counters change when a device's record goes from `old` to `new`: its
    /// environment's count (or its suspect count), and its tags' counts.
    static func countChanges(from old: Counted?, to new: Counted?) -> [CountChange] {
        var changes: [CountChange] = []
        func count(_ device: Counted?, _ sign: Int) {
            guard let device else { return }
            let field = device.isSuspect ? "suspect:\(device.environment.rawValue)" : device.environment.rawValue
            add("n:" + field, sign)
            for tag in device.tags {
                add("t:" + String(tag), sign)
            }
        }
        func add(_ target: String, _ amount: Int) {
            if let index = changes.firstIndex(where: { $0.target == target }) {
                changes[index].amount += amount
            } else {
                changes.append(CountChange(target: target, amount: amount))
            }
        }
        count(old, -1)
        count(new, 1)
        return changes.filter { $0.amount != 0 }.sorted { $0.target < $1.target }
    }

    static func decode(_ bytes: [UInt8]) throws -> PackedDevice {
        guard let record = PackedDevice(bytes: bytes) else {
            throw StoreError(
                .unexpectedReply, field: nil, message: "a device record of \(bytes.count) bytes that is not version \(PackedDevice.version)")
        }
        return record
    }

    // MARK: - Tag dictionary

    /// The most distinct tags an app may have (tag ids are 16 bits).
    static let maxTagIDs = 65_535

    /// The ids of `names` in the app's dictionary, handing new names the next ids.
    ///
    /// - Throws: ``StoreError`` (`invalidTag`, field `field`) when the dictionary is
    ///   full; `RedisClientError`.
    func ensureTagIDs(app: String, _ names: [String], field: String = "tags") async throws -> [String: UInt16] {
        var ids = tagDictionary.withLock { $0.ids(app: app, names) }
        let missing = Array(Set(names).subtracting(ids.keys)).sorted()
        guard !missing.isEmpty else { return ids }
        let keys = AppKeyspace(app: app)
        let reply = try await run([
            RedisScriptCall(
                RegistryScripts.ensureTagIDs, keys: [.string(keys.tagIDs), .string(keys.tagNames), .string(keys.tagSequence)],
                arguments: [.integer(Self.maxTagIDs)] + missing.map { .string($0) })
        ])[0]
        guard let values = reply.array, values.count == missing.count else {
            throw StoreError.unexpected(reply, from: "the ensure-tag-ids script")
        }
        for (name, value) in zip(missing, values) {
            guard let id = value.int else { throw StoreError.unexpected(reply, from: "the ensure-tag-ids script") }
            guard id > 0 else {
                throw StoreError(
                    .invalidTag, field: field, message: "app \(app) has \(Self.maxTagIDs) distinct tags already; '\(name)' would be one more")
            }
            ids[name] = UInt16(id)
        }
        tagDictionary.withLock { $0.remember(app: app, ids) }
        return ids
    }

    /// The ids of the `names` the app's dictionary knows (unknown names are left out).
    func knownTagIDs(app: String, _ names: [String]) async throws -> [String: UInt16] {
        var ids = tagDictionary.withLock { $0.ids(app: app, names) }
        let missing = Array(Set(names).subtracting(ids.keys)).sorted()
        guard !missing.isEmpty else { return ids }
        let reply = try await client.send(["HMGET", .string(AppKeyspace(app: app).tagIDs)] + missing.map { .string($0) })
        guard let values = reply.array, values.count == missing.count else { throw StoreError.unexpected(reply, from: "HMGET of tag ids") }
        var found: [String: UInt16] = [:]
        for (name, value) in zip(missing, values) {
            if let text = value.string, let id = UInt16(text) { found[name] = id }
        }
        tagDictionary.withLock { $0.remember(app: app, found) }
        ids.merge(found) { $1 }
        return ids
    }

    /// The names of tag ids.
    func tagNames(app: String, _ ids: some Sequence<UInt16>) async throws -> [UInt16: String] {
        let wanted = Array(Set(ids)).sorted()
        var names = tagDictionary.withLock { $0.names(app: app, wanted) }
        let missing = wanted.filter { names[$0] == nil }
        guard !missing.isEmpty else { return names }
        let reply = try await client.send(["HMGET", .string(AppKeyspace(app: app).tagNames)] + missing.map { .integer(Int($0)) })
        guard let values = reply.array, values.count == missing.count else { throw StoreError.unexpected(reply, from: "HMGET of tag names") }
        var found: [String: UInt16] = [:]
        for (id, value) in zip(missing, values) {
            guard let name = value.string else { throw StoreError.unexpected(reply, from: "HMGET of tag names: no name for tag \(id)") }
            names[id] = name
            found[name] = id
        }
        tagDictionary.withLock { $0.remember(app: app, found) }
        return names
    }
}

/// Tag names and ids this process has seen, per app: an id never changes once handed out.
struct TagDictionaryCache: Sendable {
    private var idsByName: [String: [String: UInt16]] = [:]
    private var namesByID: [String: [UInt16: String]] = [:]

    func ids(app: String, _ names: [String]) -> [String: UInt16] {
        guard let known = idsByName[app] else { return [:] }
        var ids: [String: UInt16] = [:]
        for name in names { if let id = known[name] { ids[name] = id } }
        return ids
    }

    func names(app: String, _ ids: [UInt16]) -> [UInt16: String] {
        guard let known = namesByID[app] else { return [:] }
        var names: [UInt16: String] = [:]
        for id in ids { if let name = known[id] { names[id] = name } }
        return names
    }

    mutating func remember(app: String, _ ids: [String: UInt16]) {
        for (name, id) in ids {
            idsByName[app, default: [:]][name] = id
            namesByID[app, default: [:]][id] = name
        }
    }
}
