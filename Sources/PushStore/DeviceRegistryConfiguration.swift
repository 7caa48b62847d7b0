import APNsCore

/// How the registry lays an app's devices out in Redis at first, and its bulk settings.
///
/// The shard count given here is an app's count until its first device is written; the app's
/// layout is stored then (``RegistryLayout``) and wins over this configuration from then on.
/// A live app's count grows with ``DeviceRegistry/reshard(app:to:concurrency:progress:)``.
package struct DeviceRegistryConfiguration: Sendable {
    /// Shards of an app not listed in ``shardCountOverrides``. Default 16.
    package var defaultShardCount: Int
    /// Shard counts of particular apps (app id → count), e.g. more shards for the largest apps.
    package var shardCountOverrides: [String: Int]
    /// Devices per batch in a bulk ``DeviceRegistry/bind(_:app:)``. Default 8,000.
    package var bulkBatchSize: Int
    /// Pipelined batches a bulk bind keeps in flight at once (each on its own pooled
    /// connection). Default 2.
    package var bulkConcurrency: Int
    /// How finely a device's reported location is kept: snapped to cells about this many
    /// kilometres wide (``GeoPoint/coarsened(toKilometres:)``). Default 1.
    package var locationPrecisionKilometres: Double
    /// Days a reported location is kept after the day of its report (UTC), 1 to
    /// ``maxLocationDays``. Default 7.
    package var locationDays: Int

    /// The most days a location may be kept: an area search reads one key per day and bucket.
    package static let maxLocationDays = 30

    /// Creates a configuration; every argument has the documented default.
    package init(
        defaultShardCount: Int = 16,
        shardCountOverrides: [String: Int] = [:],
        bulkBatchSize: Int = 8_000,
        bulkConcurrency: Int = 2,
        locationPrecisionKilometres: Double = 1,
        locationDays: Int = 7
    ) {
        precondition(defaultShardCount > 0, "defaultShardCount must be positive")
        precondition(shardCountOverrides.values.allSatisfy { $0 > 0 }, "shard counts must be positive")
        precondition(([defaultShardCount] + shardCountOverrides.values).allSatisfy { $0 <= RegistryLayout.maxShards }, "at most 2,048 shards")
        precondition(bulkBatchSize > 0, "bulkBatchSize must be positive")
        precondition(bulkConcurrency > 0, "bulkConcurrency must be positive")
        precondition(locationPrecisionKilometres > 0, "locationPrecisionKilometres must be positive")
        precondition((1...Self.maxLocationDays).contains(locationDays), "locationDays must be 1 to 30")
        self.defaultShardCount = defaultShardCount
        self.shardCountOverrides = shardCountOverrides
        self.bulkBatchSize = bulkBatchSize
        self.bulkConcurrency = bulkConcurrency
        self.locationPrecisionKilometres = locationPrecisionKilometres
        self.locationDays = locationDays
    }

    /// The number of shards `app`'s devices are split into until its layout is stored.
    package func shardCount(for app: String) -> Int {
        shardCountOverrides[app] ?? defaultShardCount
    }

    /// FNV-1a, 32 bits: offset basis 2166136261, prime 16777619. Contiguous bytes (an array, a
    /// native string's UTF-8) are read as a buffer: a token's home and bucket are hashed for
    /// every device an import writes.
    static func fnv1a32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        bytes.withContiguousStorageIfAvailable(fnv1a32(buffer:)) ?? Array(bytes).withUnsafeBufferPointer(fnv1a32(buffer:))
    }

    private static func fnv1a32(buffer bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in bytes {
            hash ^= UInt32(byte)
            hash &*= 16_777_619
        }
        return hash
    }
}
