/// Device-token registry settings (`registry:`).
public struct RegistrySettings: Sendable, Equatable {
    /// Number of registry shards of a new app (`shards`), 1...2048; default 16. An app's count is
    /// stored with its first device and wins from then on; `pushfleet registry reshard` grows it.
    public var shards: Int
    /// Whether the feedback worker checks a token APNs called `BadDeviceToken` in the app's
    /// other environment (one silent background notification) and moves the device there when
    /// APNs accepts it (`probe-other-environment`); default true. Only for apps enabled for both
    /// environments.
    public var probesOtherEnvironment: Bool
    /// How finely a device's reported location is kept, in kilometres (`location-precision-km`),
    /// 0.01...100; default 1.
    public var locationPrecisionKilometres: Double
    /// Days a reported location is kept after the day (UTC) of its report (`location-ttl-days`),
    /// 1...30; default 7.
    public var locationDays: Int

    /// Creates registry settings; `shards` defaults to 16, probing to on, locations to 1 km for
    /// 7 days.
    public init(
        shards: Int = 16, probesOtherEnvironment: Bool = true, locationPrecisionKilometres: Double = 1,
        locationDays: Int = 7
    ) {
        self.shards = shards
        self.probesOtherEnvironment = probesOtherEnvironment
        self.locationPrecisionKilometres = locationPrecisionKilometres
        self.locationDays = locationDays
    }
}
