import APNsCore

/// How an app's devices are spread over shards now: the app's layout (`pf:{<app>}:layout`,
/// `schemas/redis.md`). Pure: where a token lives, which shards a broadcast's shard task reads,
/// how a reshard may grow the count.
///
/// A token's home is `fnv1a32(token hex) mod shards`. A reshard raises the count to a multiple
/// of itself, so each shard splits into children (shard `s` of `M` into `s`, `s + M`,
/// `s + 2M`, … of `N`) and a device either stays or moves to one of its shard's children. While
/// it runs (``migratingFrom`` set) a device may still be in its previous home; new devices go to
/// their new home. Every change of layout starts a new ``epoch``; the shards carry the epoch
/// they belong to, and a script refuses a caller whose layout is older (see ``DeviceRegistry``).
package struct RegistryLayout: Hashable, Sendable, CustomStringConvertible {
    /// The shard count devices are placed by (the target of a running reshard).
    package var shards: Int
    /// Raised by every reshard.
    package var epoch: Int
    /// How device ids of this epoch are formed (``DeviceIDForm``): the layouts stored before
    /// bucketed ids have none, and are ``DeviceIDForm/sequential`` until their next reshard.
    package var ids: DeviceIDForm
    /// Device ids (bucketed: offsets in a bucket) handed out in this epoch are
    /// `idBase + (sequence - 1) × shards + shard`, so they never repeat one of an earlier epoch.
    package var idBase: UInt32
    /// The shard count before the running reshard; `nil` when none runs.
    package var migratingFrom: Int?

    /// The most shards an app may have.
    package static let maxShards = 2_048

    package init(shards: Int, epoch: Int = 0, ids: DeviceIDForm = .bucketed, idBase: UInt32 = 0, migratingFrom: Int? = nil) {
        self.shards = shards
        self.epoch = epoch
        self.ids = ids
        self.idBase = idBase
        self.migratingFrom = migratingFrom
    }

    package var description: String {
        if let migratingFrom {
            return "\(migratingFrom) → \(shards) shards (resharding, epoch \(epoch))"
        }
        return "\(shards) shards (epoch \(epoch))"
    }

    /// The shard `token` belongs in.
    package func home(of token: DeviceToken) -> Int {
        Self.shard(of: token, among: shards)
    }

    /// The indices of `tokens` shard by shard (their homes, ascending), in their given order
    /// within a shard: how a bulk bind lines up devices before it cuts them into batches, so that
    /// a batch's script calls (one per shard it touches) each carry many devices.
    package func indicesByHome(_ tokens: [DeviceToken]) -> [Int] {
        let homes = tokens.map(home(of:))
        // Counting sort: where each shard's run starts, then every index in its shard's run.
        var starts = [Int](repeating: 0, count: shards + 1)
        for home in homes {
            starts[home + 1] += 1
        }
        for shard in 0..<shards {
            starts[shard + 1] += starts[shard]
        }
        var order = [Int](repeating: 0, count: tokens.count)
        for (index, home) in homes.enumerated() {
            order[starts[home]] = index
            starts[home] += 1
        }
        return order
    }

    /// While a reshard runs, the shard `token` may still be in when it moves; `nil` when it
    /// stays where it is or no reshard runs.
    package func previousHome(of token: DeviceToken) -> Int? {
        guard let migratingFrom else { return nil }
        let previous = Self.shard(of: token, among: migratingFrom)
        return previous == home(of: token) ? nil : previous
    }

    /// How many shard tasks a broadcast or tag job fans out to now: the shard count before a
    /// running reshard (each task then reads its shard and that shard's children).
    package var taskCount: Int { migratingFrom ?? shards }

    /// The shards shard task `task` of `taskCount` reads: every shard `u` with
    /// `u ≡ task (mod taskCount)`. `first` are the shards devices may move out of (all of them
    /// when no reshard runs); `then` the shards they move into, read after `first` so that a
    /// device moving meanwhile is seen in one or the other.
    ///
    /// - Throws: ``StoreError`` (`invalidArgument`, field `shard`) when `taskCount`
    ///   is not a count the layout grew through, or `task` is not below it.
    package func shardsOfTask(_ task: Int, of taskCount: Int) throws(StoreError) -> (first: [Int], then: [Int]) {
        let settled = migratingFrom ?? shards
        guard taskCount > 0, settled % taskCount == 0 else {
            throw StoreError(.invalidArgument, field: "shard", message: "a task of \(taskCount) shards does not fit the layout of \(self)")
        }
        guard (0..<taskCount).contains(task) else {
            throw StoreError(.invalidArgument, field: "shard", message: "must be in 0..<\(taskCount), is \(task)")
        }
        let all = Array(stride(from: task, to: shards, by: taskCount))
        return (all.filter { $0 < settled }, all.filter { $0 >= settled })
    }

    /// Whether a reshard may raise `current` to `target`: a multiple of it (at least twice),
    /// up to ``maxShards``.
    ///
    /// - Throws: ``StoreError`` (`invalidArgument`, field `shards`) saying why not.
    package static func checkGrowth(from current: Int, to target: Int) throws(StoreError) {
        guard target <= maxShards else {
            throw StoreError(.invalidArgument, field: "shards", message: "must be at most \(maxShards), is \(target)")
        }
        guard target > current, target % current == 0 else {
            throw StoreError(
                .invalidArgument, field: "shards",
                message: "must be a multiple of the current \(current) shards (\(current * 2), \(current * 4), …), is \(target)")
        }
    }

    /// The id form and base of the epoch after this one, given the highest sequence of this
    /// epoch's shards (bucketed: of their buckets): past every id (bucketed: offset) this epoch
    /// handed out or may still hand out in the layers it opened. A sequential epoch is followed
    /// by a bucketed one from base 0 (bucketed ids are all above the sequential ones), unless
    /// its ids reached 2³¹.
    func nextIDs(highestSequence: Int) throws(StoreError) -> (form: DeviceIDForm, base: UInt32) {
        switch ids {
        case .sequential:
            let next = Int(idBase) + highestSequence * shards
            if next <= DeviceIDForm.offsetLimit {
                return (.bucketed, 0)
            }
            guard next + Self.maxShards * 1_024 < Int(UInt32.max) else {
                throw StoreError(.invalidArgument, field: "shards", message: "the app's device ids are exhausted (\(next))")
            }
            return (.sequential, UInt32(next))
        case .bucketed:
            let next = Int(idBase) + DeviceIDForm.extent(highestSequence: highestSequence, shards: shards)
            // Room for the first layer of the largest layout.
            guard next + Self.maxShards * ShardKeyspace.bucketCount * DeviceIDForm.firstLayerSlots < DeviceIDForm.offsetLimit else {
                throw StoreError(.invalidArgument, field: "shards", message: "the app's device ids are exhausted (offset \(next))")
            }
            return (.bucketed, UInt32(next))
        }
    }

    static func shard(of token: DeviceToken, among count: Int) -> Int {
        Int(DeviceRegistryConfiguration.fnv1a32(token.hex.utf8) % UInt32(count))
    }

    /// The layout stored in `fields` (`shards`, `epoch`, `ids`, `base`, `from`); `nil` when a
    /// field is missing or not what it should be. A layout without `ids` is sequential.
    init?(fields: [String: String]) {
        guard let shards = fields["shards"].flatMap(Int.init), shards > 0 else { return nil }
        let epoch = fields["epoch"].map(Int.init) ?? 0
        let base = fields["base"].map { UInt32($0) } ?? 0
        let ids = fields["ids"].map(DeviceIDForm.init(rawValue:)) ?? .sequential
        guard let epoch, let base, let ids else { return nil }
        var from: Int?
        if let text = fields["from"] {
            guard let value = Int(text), value > 0 else { return nil }
            from = value
        }
        self.init(shards: shards, epoch: epoch, ids: ids, idBase: base, migratingFrom: from)
    }
}
