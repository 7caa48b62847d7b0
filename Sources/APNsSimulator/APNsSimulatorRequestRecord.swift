/// One request as the simulator saw and answered it (kept when
/// ``APNsSimulatorConfiguration/recordsRequests`` is on).
public struct APNsSimulatorRequestRecord: Sendable, Hashable, Codable {
    public var deviceToken: String?
    public var topic: String?
    public var pushType: String?
    public var priority: Int?
    public var expiration: Int64?
    public var collapseID: String?
    /// The `apns-id` the request carried, if any.
    public var requestAPNsID: String?
    /// The `apns-id` of the response.
    public var responseAPNsID: String
    public var status: Int
    public var reason: String?
    public var payloadBytes: Int
    /// The payload of an accepted request, as sent (JSON text).
    public var payload: String? = nil
}
