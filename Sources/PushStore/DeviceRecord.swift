import APNsCore
import PushCore

/// What the registry holds for one device of an app.
package struct DeviceRecord: Hashable, Sendable {
    /// The device token.
    package var token: DeviceToken
    /// The APNs environment of the latest bind.
    package var environment: APNsEnvironment
    /// The user the device belongs to, if one is logged in on it.
    package var openID: String?
    /// Time of the latest bind, in milliseconds since 1970.
    package var registeredAt: Int64
    /// The device's tags, sorted.
    package var tags: [String]
    /// Set while the token is kept aside as suspect (no audience reaches it).
    package var suspicion: DeviceSuspicion?

    package init(
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

extension DeviceRecord {
    /// The device as the API and the CLI show it, and as `devices export` writes it (one JSON
    /// line, which `devices import` reads back): `token`, `environment`, `openid` (or null),
    /// `tags` (sorted), `registered-at` (ms since 1970), `suspect` (`reason`, `since`; or null).
    package var jsonValue: JSONValue {
        [
            "token": .string(token.hex), "environment": .string(environment.rawValue),
            "openid": openID.map { .string($0) } ?? .null, "tags": .array(tags.sorted().map { .string($0) }),
            "registered-at": .number(JSONNumber(Int(registeredAt))),
            "suspect": suspicion.map { ["reason": .string($0.reason), "since": .number(JSONNumber(Int($0.since)))] } ?? .null,
        ]
    }
}
