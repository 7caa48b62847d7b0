/// How the simulator treats particular device tokens (lowercase hex). Tokens in no set are
/// valid, registered devices.
public struct APNsSimulatorDevices: Sendable {
    /// Tokens whose app was uninstalled: 410 Unregistered, with the time (ms since 1970) the
    /// token stopped being valid.
    public var unregistered: [String: Int64]
    /// Tokens that expired: 410 ExpiredToken.
    public var expired: Set<String>
    /// Tokens APNs never issued: 400 BadDeviceToken.
    public var bad: Set<String>
    /// Tokens registered to another app: 400 DeviceTokenNotForTopic when pushed to with a topic
    /// other than the bundle id given here.
    public var topics: [String: String]
    /// Above this many notifications per second to one device the simulator answers
    /// 429 TooManyRequests; `nil` never does.
    public var maxNotificationsPerSecondPerDevice: Int?

    public init(
        unregistered: [String: Int64] = [:],
        expired: Set<String> = [],
        bad: Set<String> = [],
        topics: [String: String] = [:],
        maxNotificationsPerSecondPerDevice: Int? = nil
    ) {
        self.unregistered = unregistered
        self.expired = expired
        self.bad = bad
        self.topics = topics
        self.maxNotificationsPerSecondPerDevice = maxNotificationsPerSecondPerDevice
    }
}
