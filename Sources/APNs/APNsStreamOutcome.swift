import NIOCore

/// How one request's HTTP/2 stream ended.
package enum APNsStreamOutcome: Sendable {
    /// The server answered; `retryAfter` is its `Retry-After` header, as sent.
    case response(status: Int, apnsID: String?, retryAfter: String?, body: ByteBuffer?)
    /// The server never processed the request (REFUSED_STREAM, a stream above a GOAWAY's last
    /// stream id, or a request that never left): safe to send again.
    case refused
    /// The connection or stream failed with the request in flight: the server may have it.
    case connectionLost(any Error)
    /// No answer within the request timeout.
    case timedOut
}
