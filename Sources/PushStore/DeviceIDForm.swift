/// How the devices of one layout epoch get their ids (`schemas/redis.md`, "device id"). A job's
/// sent state is kept per range of 65,536 positions, and a broadcast's position is the device id,
/// so the form decides how many ranges one chunk touches: the cost of settling it in Redis.
///
/// - ``sequential``: `base + (sequence − 1) × shards + shard`, one sequence per shard. A scan
///   reads devices in bucket order and registration order is unrelated, so a chunk's ids spread
///   over every range the app has (16 at 1M devices, 1,526 at 100M). Apps registered before
///   bucketed ids keep it until their next reshard.
/// - ``bucketed``: one sequence per shard *and bucket*, and ids laid out in **layers** whose
///   slots double: layer 0 gives every (shard, bucket) ``firstLayerSlots`` ids side by side,
///   layer 1 twice as many, and so on. Within a layer, a shard's buckets are next to each other in
///   bucket order, the order a scan reads them in, so a chunk (a run of one shard's buckets)
///   touches about one range per layer its buckets reach: 4 to 6 at 1M devices as at 100M, where
///   sequential ids touch 16 and 1,526. Since slots double, at most half of the id space a
///   layer opens stays empty: a job's sent state stays a bitmap about as dense as the devices.
///   Bucketed ids are `2³¹ + offset`, so they never meet a sequential id (those stay below 2³¹),
///   and an app switches form at a reshard without renumbering a device.
package enum DeviceIDForm: String, Hashable, Sendable {
    case sequential
    case bucketed = "bucket"

    /// The ids each (shard, bucket) gets in layer 0; layer `L` gives `8 × 2^L`.
    package static let firstLayerSlots = 8
    /// The first bucketed id.
    package static let bucketedBase: UInt32 = 1 << 31
    /// Bucketed offsets are below this (so ids fit 32 bits); sequential ids stay below 2³¹ too.
    package static let offsetLimit = 1 << 31

    /// Where the `sequence`-th (1-based) device of `bucket` in `shard` sits among the epoch's
    /// bucketed ids, counted from the epoch's base: its layer `L` is the one whose slots hold it
    /// (the layers before hold `8 + 16 + … = 8 × (2^L − 1)` of a bucket's devices); the layers
    /// before `L` take `shards × 1,024 ×` that many ids; in layer `L`, (shard, bucket) has the
    /// `(shard × 1,024 + bucket)`-th run of `8 × 2^L` ids.
    package static func offset(sequence: Int, bucket: Int, shard: Int, shards: Int) -> Int {
        precondition(sequence >= 1, "sequences start at 1")
        let (before, slots) = layer(holding: sequence)
        return shards * ShardKeyspace.bucketCount * before + (shard * ShardKeyspace.bucketCount + bucket) * slots + (sequence - 1 - before)
    }

    /// How much of the epoch's bucketed id space the layers up to the one holding the
    /// `sequence`-th device of a bucket take: the next epoch's base goes past it.
    package static func extent(highestSequence sequence: Int, shards: Int) -> Int {
        guard sequence > 0 else { return 0 }
        let (before, slots) = layer(holding: sequence)
        return shards * ShardKeyspace.bucketCount * (before + slots)
    }

    /// The layer holding a bucket's `sequence`-th device: the devices the layers before it hold
    /// per bucket, and its slots.
    static func layer(holding sequence: Int) -> (before: Int, slots: Int) {
        var before = 0
        var slots = firstLayerSlots
        while sequence - 1 >= before + slots {
            before += slots
            slots *= 2
        }
        return (before, slots)
    }
}
