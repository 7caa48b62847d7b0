/// Device-token registry settings (`registry:`).
public struct RegistrySettings: Sendable, Equatable {
    /// Number of registry shards of a new app (`shards`), 1...1024; default 16. An app's count is
    /// stored with its first device and wins from then on; `pushfleet registry reshard` grows it.
    public var shards: Int
    /// Whether the feedback worker checks a token APNs called `BadDeviceToken` in the app's
    /// other environment (one silent background notification) and moves the device there when
    /// APNs accepts it (`probe-other-environment`); default true. Only for apps enabled for both
    /// environments.
    public var probesOtherEnvironment: Bool

    /// Creates registry settings; `shards` defaults to 16, probing to on.
    public init(shards: Int = 16, probesOtherEnvironment: Bool = true) {
        self.shards = shards
        self.probesOtherEnvironment = probesOtherEnvironment
    }
}
