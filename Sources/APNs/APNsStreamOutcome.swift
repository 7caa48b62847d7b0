import NIOCore

/// How one request's HTTP/2 stream ended.
package enum APNsStreamOutcome: Sendable {
    /// The server answered.
    case response(status: Int, headers: APNsAnswerHeaders, body: ByteBuffer?)
    /// The server never processed the request (REFUSED_STREAM, a stream above a GOAWAY's last
    /// stream id, or a request that never left): safe to send again.
    case refused
    /// The connection or stream failed with the request in flight: the server may have it.
    case connectionLost(any Error)
    /// No answer within the request timeout.
    case timedOut
}

/// The answer headers APNs's endpoints send that the client reads, as sent. A device send's
/// answer carries `apns-id` (and `retry-after` on 429 and 503) only: the channel headers stay
/// `nil` for it, so the answers of a campaign copy no more than they need.
package struct APNsAnswerHeaders: Sendable, Hashable {
    /// `apns-id`: the notification's id (device sends).
    package var apnsID: String?
    /// `retry-after`: how long to wait before sending again (429 and 503).
    package var retryAfter: String?
    /// The headers of a channel management or broadcast answer; `nil` when it had none.
    package var channel: APNsChannelHeaders?

    package init(apnsID: String? = nil, retryAfter: String? = nil, requestID: String? = nil, channelID: String? = nil) {
        self.apnsID = apnsID
        self.retryAfter = retryAfter
        if requestID != nil || channelID != nil {
            channel = APNsChannelHeaders(requestID: requestID, channelID: channelID)
        }
    }
}

/// `apns-request-id` (the request's id) and `apns-channel-id` (the channel a management request
/// created or named), and the body of a successful management answer. A reference: a device
/// send's answer carries `nil`, one word that costs nothing to copy.
package final class APNsChannelHeaders: Sendable, Hashable {
    package let requestID: String?
    package let channelID: String?
    package let body: ByteBuffer?

    package init(requestID: String?, channelID: String?, body: ByteBuffer? = nil) {
        self.requestID = requestID
        self.channelID = channelID
        self.body = body
    }

    package static func == (lhs: APNsChannelHeaders, rhs: APNsChannelHeaders) -> Bool {
        lhs.requestID == rhs.requestID && lhs.channelID == rhs.channelID && lhs.body == rhs.body
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(requestID)
        hasher.combine(channelID)
        hasher.combine(body)
    }
}
