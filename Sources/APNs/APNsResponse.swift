import APNsCore
import NIOCore

/// APNs's answer to one notification.
public struct APNsResponse: Sendable, Hashable {
    /// The HTTP status (200 on success).
    public var status: Int
    /// The `apns-id` APNs returned (the one sent, or one APNs generated).
    public var apnsID: String?
    /// Why APNs refused the notification; `nil` on success.
    public var reason: APNsReason?
    /// For 410: when the token stopped being valid, in milliseconds since 1970.
    public var timestamp: Int64?
    /// How long to wait before sending again, when the answer carried a `Retry-After` header
    /// (see ``APNsRetryAfter``); `nil` without one or when it could not be read.
    public var retryAfter: Duration?
    /// The `apns-request-id` of a channel management request or broadcast.
    public var requestID: String? {
        get { channel?.requestID }
        set { channel = APNsChannelHeaders(requestID: newValue, channelID: channel?.channelID, body: channel?.body) }
    }
    /// The `apns-channel-id` of a channel management answer (the channel created).
    public var channelID: String? {
        get { channel?.channelID }
        set { channel = APNsChannelHeaders(requestID: channel?.requestID, channelID: newValue, body: channel?.body) }
    }
    /// The channel headers and body, `nil` for a device send's answer.
    package var channel: APNsChannelHeaders?
    /// The body of a successful channel management answer that has one (a read or a list).
    package var body: ByteBuffer? { channel?.body }
    /// What to do next.
    public var responseClass: APNsResponseClass
    /// How many times the notification was sent before this answer (refused streams, which
    /// APNs never processed, do not count).
    public var attempts: Int

    public init(
        status: Int, apnsID: String?, reason: APNsReason?, timestamp: Int64?, retryAfter: Duration? = nil, attempts: Int
    ) {
        self.status = status
        self.apnsID = apnsID
        self.reason = reason
        self.timestamp = timestamp
        self.retryAfter = retryAfter
        self.responseClass = APNsResponseClass(status: status, reason: reason)
        self.attempts = attempts
    }

    /// Whether APNs accepted the notification.
    public var isSuccess: Bool { (200..<300).contains(status) }
}
