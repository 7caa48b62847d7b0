import APNsCore
import NIOCore

/// One notification to one device.
///
/// The payload is pre-serialized JSON: a chunk's payload is encoded once and the same
/// `ByteBuffer` (shared storage, no copy) goes to every device of the chunk.
public struct APNsRequest: Sendable {
    /// Which provider credential (and so which connection pool) sends it.
    public var credential: APNsCredential
    /// Sandbox or production; selects the endpoint.
    public var environment: APNsEnvironment
    public var deviceToken: DeviceToken
    /// The `apns-topic`: the bundle id plus the push type's suffix.
    public var topic: String
    /// The `apns-push-type`.
    public var pushType: APNsPushType
    /// The `apns-priority`; `nil` leaves APNs's default (10, or 5 for background).
    public var priority: APNsPriority?
    /// The `apns-expiration` in seconds since 1970; 0 means deliver once or never. `nil` omits it.
    public var expiration: Int64?
    /// The `apns-collapse-id` (at most 64 bytes).
    public var collapseID: String?
    /// The `apns-id`; generated when `nil`, and kept for every retry of this request.
    public var apnsID: APNsID?
    /// The JSON payload.
    public var payload: ByteBuffer
    /// Raw header changes applied last, for conformance tests that must send what the typed
    /// fields cannot express. Pseudo-headers (`:method`, `:path`) may be replaced; a value of
    /// `nil` removes the header; repeated names are added repeatedly.
    @_spi(Testing) public var headerOverrides: [(name: String, value: String?)] = []

    /// A request for an app's bundle id; the topic gets the push type's suffix.
    public init(
        credential: APNsCredential,
        environment: APNsEnvironment,
        deviceToken: DeviceToken,
        bundleID: String,
        pushType: APNsPushType = .alert,
        priority: APNsPriority? = nil,
        expiration: Int64? = nil,
        collapseID: String? = nil,
        apnsID: APNsID? = nil,
        payload: ByteBuffer
    ) {
        self.credential = credential
        self.environment = environment
        self.deviceToken = deviceToken
        self.topic = pushType.topic(forBundleID: bundleID)
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.payload = payload
    }
}
