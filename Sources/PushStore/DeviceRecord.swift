import APNsCore

/// What the registry holds for one device of an app.
public struct DeviceRecord: Hashable, Sendable {
    /// The device token.
    public var token: DeviceToken
    /// The APNs environment of the latest bind.
    public var environment: APNsEnvironment
    /// The user the device belongs to, if one is logged in on it.
    public var openID: String?
    /// Time of the latest bind, in milliseconds since 1970.
    public var registeredAt: Int64
    /// The device's tags, sorted.
    public var tags: [String]
    /// Set while the token is kept aside as suspect (no audience reaches it).
    public var suspicion: DeviceSuspicion?

    public init(
        token: DeviceToken, environment: APNsEnvironment, openID: String?, registeredAt: Int64, tags: [String],
        suspicion: DeviceSuspicion? = nil
    ) {
        self.token = token
        self.environment = environment
        self.openID = openID
        self.registeredAt = registeredAt
        self.tags = tags
        self.suspicion = suspicion
    }
}
