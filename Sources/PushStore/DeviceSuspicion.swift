/// Why a token is kept aside: APNs refused it in a way that usually means a misconfiguration
/// (`BadDeviceToken`: wrong environment; `DeviceTokenNotForTopic`: wrong app), so it is kept out
/// of further sends of its environment instead of being removed, until the device binds again
/// or an operator restores or unbinds it.
package struct DeviceSuspicion: Hashable, Sendable {
    /// APNs's reason.
    package var reason: String
    /// When the answer came (ms since 1970).
    package var since: Int64

    package init(reason: String, since: Int64) {
        self.reason = reason
        self.since = since
    }
}
