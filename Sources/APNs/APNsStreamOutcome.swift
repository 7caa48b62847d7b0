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

/// The answer headers APNs's endpoints send that the client reads, as sent.
package struct APNsAnswerHeaders: Sendable, Hashable {
    /// `apns-id`: the notification's id (device sends).
    package var apnsID: String?
    /// `retry-after`: how long to wait before sending again (429 and 503).
    package var retryAfter: String?
    /// `apns-request-id`: the request's id (channel management and broadcasts).
    package var requestID: String?
    /// `apns-channel-id`: the channel a management request created or named.
    package var channelID: String?

    package init(apnsID: String? = nil, retryAfter: String? = nil, requestID: String? = nil, channelID: String? = nil) {
        self.apnsID = apnsID
        self.retryAfter = retryAfter
        self.requestID = requestID
        self.channelID = channelID
    }
}
