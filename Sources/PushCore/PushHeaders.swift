public import APNsCore

/// The APNs request headers a job's notifications are sent with (the job's `headers` field).
public struct PushHeaders: Hashable, Sendable {
    /// The longest `collapse-id` APNs accepts, in bytes of UTF-8.
    public static let maxCollapseIDBytes = 64

    /// `apns-push-type`.
    public var pushType: APNsPushType
    /// `apns-priority`; when absent, see ``effectivePriority``.
    public var priority: APNsPriority?
    /// `apns-expiration`: UNIX seconds after which APNs stops trying; 0 means deliver once or
    /// never. Absent means APNs's default (it stores the notification for a while).
    public var expiration: Int?
    /// `apns-collapse-id`: notifications with the same id replace each other on the device.
    public var collapseID: String?
    /// `apns-topic`; when absent the worker uses the app's bundle id with the push type's suffix
    /// (``APNsPushType/topic(forBundleID:)``).
    public var topic: String?

    public init(
        pushType: APNsPushType,
        priority: APNsPriority? = nil,
        expiration: Int? = nil,
        collapseID: String? = nil,
        topic: String? = nil
    ) {
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.topic = topic
    }

    /// The priority to send with: the job's, or else 5 for push types that forbid 10 and 10 for
    /// the rest. (APNs itself assumes 10 when the header is absent, which it then rejects for
    /// background pushes, so the worker always sends the header.)
    public var effectivePriority: APNsPriority {
        priority ?? (pushType.forbidsImmediatePriority ? .considerDevicePower : .immediately)
    }
}
