import APNsCore
import Redis

/// The Redis keys of one shard of one app (see `schemas/redis.md`).
///
/// Every key starts with `pf:{<app>:<shard>}:`, so all of them hash to the shard's slot and a
/// script may touch any of them atomically in a Redis Cluster.
struct ShardKeyspace: Sendable {
    /// Buckets of a shard: each is a hash of the devices whose token falls in it, small enough
    /// for Redis's compact (listpack) encoding up to about 128 devices per bucket.
    static let bucketCount = 1_024

    /// `pf:{<app>:<shard>}:`
    let base: String

    init(app: String, shard: Int) {
        base = "pf:{\(app):\(shard)}:"
    }

    /// HASH binary token → packed device record (``PackedDevice``), for the tokens of bucket `index`.
    func bucket(_ index: Int) -> String { base + "d:" + String(index) }
    /// The bucket key of `token`.
    func bucket(of token: DeviceToken) -> String { bucket(Self.bucketIndex(of: token)) }
    /// HASH: devices per environment (`sandbox`, `production`), suspect ones apart
    /// (`suspect:<env>`); the sequences `id:<epoch>` (devices added in a layout epoch) and `gen`
    /// (openid bindings); `epoch`, the layout epoch the shard belongs to; while a reshard moves
    /// devices out of the shard, `to` (the new shard count), `moved` (buckets done) and `fence`,
    /// `fence-at` (the bucket being moved, since when).
    var counts: String { base + "n" }
    /// HASH tag id → number of the shard's devices carrying it; a field is deleted at 0.
    var tagCounts: String { base + "t" }
    /// STRING: the id sequence of each bucket in the layout epoch's bucketed ids, a big-endian
    /// u32 at `4 × bucket` (``DeviceIDForm/bucketed``); deleted when the shard enters an epoch.
    var idSequences: String { base + "i" }

    /// The bucket of a token: FNV-1a of its binary bytes (the shard hashes its hex digits, so the
    /// two are independent) modulo ``bucketCount``.
    static func bucketIndex(of token: DeviceToken) -> Int {
        bucketIndex(ofBytes: token.markerBytes)
    }

    /// The bucket of the token whose binary form is `bytes`.
    static func bucketIndex(ofBytes bytes: [UInt8]) -> Int {
        Int(DeviceRegistryConfiguration.fnv1a32(bytes) % UInt32(bucketCount))
    }
}

/// The Redis keys of an app as a whole: slot `{<app>}` (the tag dictionary).
struct AppKeyspace: Sendable {
    let base: String

    init(app: String) {
        base = "pf:{\(app)}:"
    }

    /// HASH `shards`, `epoch`, `base` and, while a reshard runs, `from` (``RegistryLayout``).
    var layout: String { base + "layout" }
    /// HASH tag name → tag id (decimal).
    var tagIDs: String { base + "tag-ids" }
    /// HASH tag id (decimal) → tag name.
    var tagNames: String { base + "tag-names" }
    /// STRING: the last tag id handed out.
    var tagSequence: String { base + "tag-seq" }
}

/// The key of an openid's mapping: `pf:{<app>:openid:<openid>}`, its own hash slot.
func openIDKey(app: String, openID: String) -> String {
    "pf:{\(app):openid:\(openID)}"
}

/// The `KEYS` of a script call on one shard: the shard's counts (and, for a write, its tag
/// counts and id sequences), then each bucket the call touches once.
struct BucketKeys {
    let shard: ShardKeyspace
    private(set) var keys: [RedisArgument]
    private var indexes: [Int: Int] = [:]

    init(_ shard: ShardKeyspace, writing: Bool = false) {
        self.shard = shard
        keys = writing ? [.string(shard.counts), .string(shard.tagCounts), .string(shard.idSequences)] : [.string(shard.counts)]
    }

    /// The (1-based) position of bucket `bucket`'s key in ``keys``, adding it the first time.
    mutating func index(of bucket: Int) -> Int {
        if let index = indexes[bucket] {
            return index
        }
        keys.append(.string(shard.bucket(bucket)))
        indexes[bucket] = keys.count
        return keys.count
    }
}
