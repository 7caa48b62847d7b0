import NIOCore
import NIOHTTP2

/// Keeps an HTTP/2 connection's receive window open when `NIOHTTP2Handler` runs without a stream
/// multiplexer.
///
/// The multiplexer is what normally answers received DATA with connection-level WINDOW_UPDATE
/// frames. A frame-level handler has to do it itself: otherwise the peer may send only 65,535
/// bytes of DATA over the connection's whole life (RFC 9113 §6.9.2) and every later response
/// body (request payloads, on the simulator) waits forever. The APNs client speaks HTTP/2 itself
/// and keeps its window open in `APNsConnectionHandler`.
///
/// Put it right after `NIOHTTP2Handler`. When the window falls to half of `targetSize`, it is
/// topped up to `targetSize` again; the update is flushed at the end of the read.
public final class HTTP2ConnectionWindowHandler: ChannelInboundHandler {
    public typealias InboundIn = HTTP2Frame
    public typealias InboundOut = HTTP2Frame
    public typealias OutboundOut = HTTP2Frame

    private let targetSize: Int
    private var updatePending = false

    /// - Parameter targetSize: the window to keep, at most 2^31 - 1 bytes.
    public init(targetSize: Int = 1 << 20) {
        precondition(targetSize > 0 && targetSize <= Int(Int32.max), "an HTTP/2 window is 1 ... 2^31 - 1 bytes")
        self.targetSize = targetSize
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let update = event as? NIOHTTP2WindowUpdatedEvent, update.streamID == .rootStream,
            let size = update.inboundWindowSize, size <= targetSize / 2
        {
            let frame = HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: targetSize - size))
            context.write(wrapOutboundOut(frame), promise: nil)
            updatePending = true
        }
        context.fireUserInboundEventTriggered(event)
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        if updatePending {
            updatePending = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }
}
