/// How a job's notifications reach their devices: the job's `delivery`.
public enum DeliveryRoute: String, Hashable, Sendable, CaseIterable {
    /// Through APNs only: the default.
    case apns
    /// Over the online channel to the devices connected to a gateway when the job is sent
    /// (presence), through APNs to the others and to each online device that does not
    /// acknowledge its message within the gateway's ack timeout.
    case onlineFirst = "online-first"
    /// In-app messages: over the online channel only, never APNs. Each device's message is kept
    /// in its inbox (bounded, until the job's expiration) from the moment it is sent; a device
    /// connected then gets it at once, the others (and one that does not acknowledge) when they
    /// connect next.
    case onlineOnly = "online-only"

    /// Whether the online channel carries the job's notifications (first or only).
    public var usesOnlineChannel: Bool { self != .apns }

    /// The values a job may name, for error messages.
    static let names = allCases.map(\.rawValue).joined(separator: " or ")
}
