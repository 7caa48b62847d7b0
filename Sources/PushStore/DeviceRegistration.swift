import APNsCore

/// One device as a client SDK binds it: the token, the APNs environment it came from, the user
/// logged in on it (if any) and tags to add.
package struct DeviceRegistration: Hashable, Sendable {
    /// The APNs device token.
    package var token: DeviceToken
    /// The APNs environment the token was issued for (a debug build's token is a sandbox token).
    package var environment: APNsEnvironment
    /// The user logged in on the device. `nil` leaves the device's current user as it is
    /// (logging out is ``DeviceRegistry/logOut(app:openID:)``; the device stays registered).
    package var openID: String?
    /// Tags to add to the device; tags it already has are kept.
    package var tags: [String]
    /// When the device registered, in milliseconds since 1970; `nil` means the registry's clock.
    package var registeredAt: Int64?
    /// The device's IANA time zone (``TimeZoneName``). `nil` leaves the one it has as it is.
    package var timeZone: String?

    package init(
        token: DeviceToken,
        environment: APNsEnvironment,
        openID: String? = nil,
        tags: [String] = [],
        registeredAt: Int64? = nil,
        timeZone: String? = nil
    ) {
        self.token = token
        self.environment = environment
        self.openID = openID
        self.tags = tags
        self.registeredAt = registeredAt
        self.timeZone = timeZone
    }
}
