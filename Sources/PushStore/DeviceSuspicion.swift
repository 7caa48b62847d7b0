/// Why a token is kept aside: APNs refused it in a way that usually means a misconfiguration
/// (`BadDeviceToken`: wrong environment; `DeviceTokenNotForTopic`: wrong app), so it is kept out
/// of further sends of its environment instead of being removed, until the device binds again
/// or an operator restores or unbinds it.
public struct DeviceSuspicion: Hashable, Sendable {
    /// APNs's reason.
    public var reason: String
    /// When the answer came (ms since 1970).
    public var since: Int64

    public init(reason: String, since: Int64) {
        self.reason = reason
        self.since = since
    }
}
