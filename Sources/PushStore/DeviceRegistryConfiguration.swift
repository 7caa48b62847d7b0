import APNsCore

/// How the registry lays an app's devices out in Redis.
///
/// The shard count of an app is fixed for the life of its data: a token's shard, and so every
/// key that holds it, is `fnv1a32(token) mod shardCount`. Changing the count for an app that has
/// devices strands them in their old shards (a re-sharding migration is not built).
public struct DeviceRegistryConfiguration: Sendable {
    /// Shards of an app not listed in ``shardCountOverrides``. Default 16.
    public var defaultShardCount: Int
    /// Shard counts of particular apps (app id → count), e.g. more shards for the largest apps.
    public var shardCountOverrides: [String: Int]
    /// How long a materialised tag audience lives if its reader never deletes it. Default 10 minutes.
    public var audienceTimeToLive: Duration
    /// Devices per pipelined batch in a bulk ``DeviceRegistry/bind(_:app:)``. Default 1,000.
    public var bulkBatchSize: Int
    /// Pipelined batches a bulk bind keeps in flight at once (each on its own pooled
    /// connection). Default 2.
    public var bulkConcurrency: Int

    /// Creates a configuration; every argument has the documented default.
    public init(
        defaultShardCount: Int = 16,
        shardCountOverrides: [String: Int] = [:],
        audienceTimeToLive: Duration = .seconds(600),
        bulkBatchSize: Int = 1_000,
        bulkConcurrency: Int = 2
    ) {
        precondition(defaultShardCount > 0, "defaultShardCount must be positive")
        precondition(shardCountOverrides.values.allSatisfy { $0 > 0 }, "shard counts must be positive")
        precondition(audienceTimeToLive >= .milliseconds(1), "audienceTimeToLive must be at least 1 ms")
        precondition(bulkBatchSize > 0, "bulkBatchSize must be positive")
        precondition(bulkConcurrency > 0, "bulkConcurrency must be positive")
        self.defaultShardCount = defaultShardCount
        self.shardCountOverrides = shardCountOverrides
        self.audienceTimeToLive = audienceTimeToLive
        self.bulkBatchSize = bulkBatchSize
        self.bulkConcurrency = bulkConcurrency
    }

    /// The number of shards `app`'s tokens are split into.
    public func shardCount(for app: String) -> Int {
        shardCountOverrides[app] ?? defaultShardCount
    }

    /// The shard that holds `token` for `app`: FNV-1a (32-bit) of the token's lowercase hex
    /// digits as ASCII, modulo the app's shard count. Stable across processes and releases.
    public func shard(of token: DeviceToken, app: String) -> Int {
        Int(Self.fnv1a32(token.hex.utf8) % UInt32(shardCount(for: app)))
    }

    /// FNV-1a, 32 bits: offset basis 2166136261, prime 16777619.
    static func fnv1a32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in bytes {
            hash ^= UInt32(byte)
            hash &*= 16_777_619
        }
        return hash
    }
}
