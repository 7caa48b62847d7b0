import APNsCore
import Redis

/// Raising an app's shard count on a live registry.
///
/// 1. **Enter the new epoch.** Every shard of the old count gets the new epoch and `to`; every
///    new shard the epoch. Callers of the old epoch are refused from then on, so the old
///    epoch's id sequences stop; the new epoch's ids start above them. The layout is written
///    with `from` (the old count).
/// 2. **Move the buckets**, shard by shard, bucket by bucket: fence the bucket (writes to it
///    wait, ≤ ``fenceMilliseconds``), copy its moving devices to their new shards, then delete
///    them from the old one and mark the bucket moved, in one script that checks each record is
///    still the one copied. Meanwhile new devices go to their new shards, and a device is
///    changed where it is (``update(app:tokens:assumeAbsent:_:)``).
/// 3. **Finish**: the layout loses `from`.
///
/// A broadcast reads a task's old shards before its new ones (``scanShard(app:task:environment:filter:cursor:count:)``)
/// and devices keep their ids when they move, so a campaign running through a reshard reaches
/// every device once. Running the reshard again after an interruption carries on where it stopped.
extension DeviceRegistry {
    /// What a reshard did.
    package struct ReshardReport: Hashable, Sendable {
        /// The layout before and after.
        package var before: RegistryLayout
        package var after: RegistryLayout
        /// Buckets moved by this run (of `before.taskCount × 1,024`).
        package var bucketsMoved: Int
        /// Devices moved to a new shard by this run.
        package var devicesMoved: Int
    }

    /// Raises the shard count of `app` to `target` (a multiple of the current count, at most
    /// ``RegistryLayout/maxShards``), or finishes a reshard to `target` that was interrupted.
    ///
    /// - Parameters:
    ///   - concurrency: old shards moved at once.
    ///   - progress: called after each old shard with (shards done, shards in all, devices moved).
    /// - Throws: ``StoreError`` naming `app` or `shards` (not a multiple, too many, or
    ///   another reshard runs to another count); `busy` when another reshard changed the layout
    ///   meanwhile; `RedisClientError`. Nothing is lost when it throws: run it again.
    package func reshard(
        app: String, to target: Int, concurrency: Int = 4, progress: (@Sendable (Int, Int, Int) -> Void)? = nil
    ) async throws -> ReshardReport {
        try StoreValidation.app(app)
        guard concurrency > 0 else {
            throw StoreError(.invalidArgument, field: "concurrency", message: "must be positive, is \(concurrency)")
        }
        _ = try await writableLayout(app: app)
        let before = try await refreshLayout(app: app)
        var layout = before
        if let from = layout.migratingFrom {
            guard layout.shards == target else {
                throw StoreError(
                    .invalidArgument, field: "shards",
                    message:
                        "app \(app) is being resharded from \(from) to \(layout.shards) shards; run the reshard to \(layout.shards) again to finish it first"
                )
            }
        } else {
            if target == layout.shards {
                return ReshardReport(before: before, after: before, bucketsMoved: 0, devicesMoved: 0)
            }
            try RegistryLayout.checkGrowth(from: layout.shards, to: target)
            layout = try await enterEpoch(app: app, layout: layout, target: target)
        }
        let moving = layout
        let parents = moving.migratingFrom!
        var totals = (shards: 0, buckets: 0, devices: 0)
        try await withThrowingTaskGroup(of: (buckets: Int, devices: Int).self) { group in
            var next = 0
            func start(_ shard: Int) {
                group.addTask {
                    var buckets = 0
                    var devices = 0
                    for bucket in 0..<ShardKeyspace.bucketCount {
                        if let count = try await self.moveBucket(bucket, of: shard, app: app, layout: moving) {
                            buckets += 1
                            devices += count
                        }
                    }
                    return (buckets, devices)
                }
            }
            while next < min(concurrency, parents) {
                start(next)
                next += 1
            }
            while let done = try await group.next() {
                totals.shards += 1
                totals.buckets += done.buckets
                totals.devices += done.devices
                progress?(totals.shards, parents, totals.devices)
                if next < parents {
                    start(next)
                    next += 1
                }
            }
        }
        _ = try await pipeline(
            (0..<parents).map { ["HDEL", .string(ShardKeyspace(app: app, shard: $0).counts), "to", "moved", "fence", "fence-at"] })
        try await writeLayout(app: app, expectedEpoch: moving.epoch, from: nil, fields: [:])
        let after = try await refreshLayout(app: app)
        return ReshardReport(before: before, after: after, bucketsMoved: totals.buckets, devicesMoved: totals.devices)
    }

    /// Step 1: moves every shard into the next epoch and writes the layout; returns it.
    func enterEpoch(app: String, layout: RegistryLayout, target: Int) async throws -> RegistryLayout {
        let next = layout.epoch + 1
        let calls = (0..<target).map { shard in
            let keys = ShardKeyspace(app: app, shard: shard)
            return RedisScriptCall(
                RegistryScripts.enterEpoch, keys: [.string(keys.counts), .string(keys.idSequences)],
                arguments: [.integer(layout.epoch), .integer(next), .integer(shard < layout.shards ? target : 0)])
        }
        var highest = 0
        for (shard, reply) in zip(0..<layout.shards, try await run(calls)) {
            guard let sequence = reply.int else { throw StoreError.unexpected(reply, from: "the enter-epoch script") }
            guard sequence >= 0 else {
                throw StoreError(
                    .busy, field: nil, message: "shard \(shard) of app \(app) is in neither epoch \(layout.epoch) nor \(next): another reshard runs")
            }
            highest = max(highest, Int(sequence))
        }
        let ids = try layout.nextIDs(highestSequence: highest)
        try await writeLayout(
            app: app, expectedEpoch: layout.epoch, from: layout.shards,
            fields: ["shards": String(target), "epoch": String(next), "ids": ids.form.rawValue, "base": String(ids.base)])
        return try await refreshLayout(app: app)
    }

    private func writeLayout(app: String, expectedEpoch: Int, from: Int?, fields: [String: String]) async throws {
        var arguments: [RedisArgument] = [.integer(expectedEpoch), .string(from.map(String.init) ?? "")]
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            arguments += [.string(name), .string(value)]
        }
        let reply = try await run([RedisScriptCall(RegistryScripts.writeLayout, keys: [.string(AppKeyspace(app: app).layout)], arguments: arguments)]
        )[0]
        guard reply.int == 1 else {
            throw StoreError(.busy, field: nil, message: "the layout of app \(app) left epoch \(expectedEpoch) meanwhile: another reshard runs")
        }
    }

    /// Step 2 for one bucket of one old shard; the number of devices moved, or `nil` when the
    /// bucket had moved already.
    func moveBucket(_ bucket: Int, of shard: Int, app: String, layout: RegistryLayout) async throws -> Int? {
        let keys = ShardKeyspace(app: app, shard: shard)
        // Copies made by an earlier attempt: (child shard, record) by token.
        var landed: [DeviceToken: (Int, [UInt8])] = [:]
        for _ in 0..<Self.updateAttempts {
            let reply = try await run([
                RedisScriptCall(
                    RegistryScripts.fenceBucket, keys: [.string(keys.counts), .string(keys.bucket(bucket))],
                    arguments: [.integer(bucket), .integer(layout.epoch)])
            ])[0]
            guard let parts = reply.array, let status = parts.first?.int else { throw StoreError.unexpected(reply, from: "the fence-bucket script") }
            if status == 1 { return nil }
            guard status == 0, parts.count == 2, let fields = parts[1].array, fields.count.isMultiple(of: 2) else {
                throw StoreError(
                    .unexpectedReply, field: nil, message: "shard \(shard) of app \(app) is not being resharded in epoch \(layout.epoch): \(reply)")
            }
            var moving: [(token: DeviceToken, bytes: [UInt8], record: PackedDevice, child: Int)] = []
            for index in stride(from: 0, to: fields.count, by: 2) {
                guard let tokenBytes = fields[index].bytes, let token = DeviceToken(markerBytes: tokenBytes), let bytes = fields[index + 1].bytes
                else {
                    throw StoreError.unexpected(reply, from: "the fence-bucket script")
                }
                let child = layout.home(of: token)
                if child != shard {
                    moving.append((token, bytes, try Self.decode(bytes), child))
                }
            }
            // A device copied by an earlier attempt and removed from the old shard since goes too.
            let gone = Set(landed.keys).subtracting(moving.map(\.token))
            try await land(gone.map { ($0, nil, landed[$0]!.0) }, app: app, layout: layout, bucket: bucket)
            try await land(moving.map { ($0.token, $0.record, $0.child) }, app: app, layout: layout, bucket: bucket)
            landed = Dictionary(uniqueKeysWithValues: moving.map { ($0.token, ($0.child, $0.bytes)) })

            var arguments: [RedisArgument] = [.integer(bucket), .integer(layout.epoch), .integer(moving.count)]
            var sums: [String: Int] = [:]
            for device in moving {
                arguments += [.bytes(device.token.markerBytes), .bytes(device.bytes)]
                for change in Self.countChanges(from: Counted(device.record), to: nil) {
                    sums[change.target, default: 0] += change.amount
                }
            }
            for (target, change) in sums.sorted(by: { $0.key < $1.key }) where change != 0 {
                arguments += [.string(target), .integer(change)]
            }
            let committed = try await run([
                RedisScriptCall(
                    RegistryScripts.commitBucket, keys: [.string(keys.counts), .string(keys.tagCounts), .string(keys.bucket(bucket))],
                    arguments: arguments)
            ])[0]
            if committed.int == 1 {
                return moving.count
            }
        }
        throw StoreError(
            .busy, field: nil, message: "bucket \(bucket) of shard \(shard) of app \(app) kept changing while it was moved; run the reshard again")
    }

    /// Writes each device's record (`nil`: removes it) in its new shard, over whatever that
    /// shard holds for it.
    private func land(_ devices: [(DeviceToken, PackedDevice?, Int)], app: String, layout: RegistryLayout, bucket: Int) async throws {
        guard !devices.isEmpty else { return }
        var pending = devices.map { (token: $0.0, record: $0.1, child: $0.2, current: [UInt8]?.none) }
        for _ in 0..<Self.updateAttempts {
            var byChild: [Int: [Int]] = [:]
            for (index, device) in pending.enumerated() {
                byChild[device.child, default: []].append(index)
            }
            var calls: [RedisScriptCall] = []
            var callPatches: [[Patch]] = []
            for (child, indexes) in byChild.sorted(by: { $0.key < $1.key }) {
                var patches: [Patch] = []
                var lowestGeneration: UInt32 = 0
                for index in indexes {
                    let device = pending[index]
                    let old = try device.current.map(Self.decode)
                    let change: RecordChange = device.record.map { .write($0) } ?? .delete
                    patches.append(
                        Patch(index: index, token: device.token, expected: device.current, change: change, old: old, atPreviousHome: false))
                    lowestGeneration = max(lowestGeneration, device.record?.generation ?? 0)
                }
                for slice in patches.batches(of: Self.patchesPerCall) {
                    calls.append(patchCall(app: app, shard: child, layout: layout, slice, lowestGeneration: lowestGeneration))
                    callPatches.append(slice)
                }
            }
            var next: [(token: DeviceToken, record: PackedDevice?, child: Int, current: [UInt8]?)] = []
            for (slice, reply) in zip(callPatches, try await run(calls)) {
                let indexes = slice.map(\.index)
                guard case .results(let results) = try Self.patchResults(reply, patches: slice) else {
                    throw StoreError(
                        .busy, field: nil, message: "a new shard of app \(app) left epoch \(layout.epoch) while a reshard moved devices into it")
                }
                for (index, result) in zip(indexes, results) {
                    switch result {
                    case .applied:
                        continue
                    case .changed(let bytes):
                        var device = pending[index]
                        if bytes == device.record?.bytes { continue }
                        device.current = bytes
                        next.append(device)
                    case .fenced, .moved:
                        throw StoreError.unexpected(reply, from: "the apply-patches script in a new shard")
                    }
                }
            }
            if next.isEmpty { return }
            pending = next
        }
        throw StoreError(.busy, field: nil, message: "devices of bucket \(bucket) of app \(app) kept changing in their new shards")
    }
}
