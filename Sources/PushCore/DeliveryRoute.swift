/// How a job's notifications reach their devices: the job's `delivery`.
public enum DeliveryRoute: String, Hashable, Sendable, CaseIterable {
    /// Through APNs only: the default.
    case apns
    /// Over the online channel to the devices connected to a gateway when the job is sent
    /// (presence), through APNs to the others and to each online device that does not
    /// acknowledge its message within the gateway's ack timeout.
    case onlineFirst = "online-first"

    /// The values a job may name, for error messages.
    static let names = allCases.map(\.rawValue).joined(separator: " or ")
}
