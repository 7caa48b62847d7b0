import APNsCore

/// The tokens of one shard that match a tag expression, materialised in a temporary Redis set.
///
/// Read it with ``DeviceRegistry/scanTagAudience(_:cursor:count:)`` and delete it with
/// ``DeviceRegistry/releaseTagAudience(_:)`` (or use
/// ``DeviceRegistry/withTagAudience(app:shard:environment:expression:_:)``, which does both). If
/// the reader dies, the set expires after ``DeviceRegistryConfiguration/audienceTimeToLive``.
public struct TagAudience: Hashable, Sendable {
    /// The app.
    public var app: String
    /// The shard the audience was computed over.
    public var shard: Int
    /// The environment the audience was filtered to.
    public var environment: APNsEnvironment
    /// The Redis key of the temporary set (in the shard's hash slot). It does not exist when
    /// ``count`` is 0.
    public var key: String
    /// How many tokens matched when the set was computed.
    public var count: Int

    public init(app: String, shard: Int, environment: APNsEnvironment, key: String, count: Int) {
        self.app = app
        self.shard = shard
        self.environment = environment
        self.key = key
        self.count = count
    }
}
