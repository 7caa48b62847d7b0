import FlowControl
import HTTP2Frames
import NIOCore
import NIOPosix
import NIOSSL

/// One TLS connection to a binary interface endpoint (the gateway or the feedback service):
/// writes bytes, and reports the first thing the server does: send bytes (an error response, or
/// feedback tuples) or close.
final class APNsBinaryConnection: Sendable {
    /// What the server did.
    enum Event: Sendable, Equatable {
        /// An error response.
        case errorResponse(status: APNsBinaryStatus, identifier: UInt32)
        /// The server closed the connection without one.
        case closed
    }

    let channel: any Channel
    private let handler: NIOLoopBound<Handler>

    private init(channel: any Channel, handler: NIOLoopBound<Handler>) {
        self.channel = channel
        self.handler = handler
    }

    static func connect(
        eventLoop: any EventLoop, endpoint: APNsClientConfiguration.Endpoint, sslContext: NIOSSLContext, timeout: Duration
    ) async throws(APNsError) -> APNsBinaryConnection {
        let serverHostname = endpoint.host.isIPAddress ? nil : endpoint.host
        do {
            return try await ClientBootstrap(group: eventLoop)
                .connectTimeout(.nanoseconds(timeout.nanoseconds))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
                        try pipeline.addHandler(Handler())
                    }
                }
                .connect(host: endpoint.host, port: endpoint.port)
                .flatMapThrowing { channel in
                    let handler = try channel.pipeline.syncOperations.handler(type: Handler.self)
                    return APNsBinaryConnection(channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop))
                }
                .get()
        } catch {
            throw APNsError(.connectFailed, underlying: error)
        }
    }

    /// Writes and flushes `bytes`.
    func write(_ bytes: ByteBuffer) async throws(APNsError) {
        do {
            try await channel.writeAndFlush(bytes)
        } catch {
            throw APNsError(.connectionLost, underlying: error)
        }
    }

    /// The gateway's error response or close, if one comes within `duration` (or came before).
    func event(within duration: Duration) async -> Event? {
        let loop = channel.eventLoop
        let handler = self.handler
        let answer = loop.makePromise(of: Event?.self)
        loop.execute {
            handler.value.whenEvent(within: .nanoseconds(duration.nanoseconds), on: loop) { answer.succeed($0) }
        }
        return try? await answer.futureResult.get()
    }

    /// Everything the server sends until it closes (the feedback service's tuples).
    func readUntilClosed() async -> ByteBuffer {
        let loop = channel.eventLoop
        let handler = self.handler
        let answer = loop.makePromise(of: ByteBuffer.self)
        loop.execute { handler.value.whenClosed { answer.succeed($0) } }
        return (try? await answer.futureResult.get()) ?? ByteBuffer()
    }

    func close() {
        channel.close(promise: nil)
    }

    /// Collects what the server sends; the first error response or the close is the event.
    final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer

        private var received = ByteBuffer()
        private var event: Event?
        private var isClosed = false
        private var waiters: [(Event?) -> Void] = []
        private var closeWaiters: [(ByteBuffer) -> Void] = []

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            received.writeBuffer(&bytes)
            if event == nil, received.readableBytes >= APNsBinaryFrame.errorResponseSize {
                var copy = received
                if let (status, identifier) = APNsBinaryFrame.readErrorResponse(from: &copy) {
                    fire(.errorResponse(status: status, identifier: identifier))
                }
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            isClosed = true
            if event == nil { fire(.closed) }
            let waiting = closeWaiters
            closeWaiters = []
            for waiter in waiting { waiter(received) }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }

        private func fire(_ event: Event) {
            self.event = event
            let waiting = waiters
            waiters = []
            for waiter in waiting { waiter(event) }
        }

        func whenEvent(within timeout: TimeAmount, on loop: any EventLoop, _ callback: @escaping (Event?) -> Void) {
            if let event {
                callback(event)
                return
            }
            var done = false
            let timer = loop.assumeIsolated().scheduleTask(in: timeout) {
                guard !done else { return }
                done = true
                callback(nil)
            }
            waiters.append { event in
                guard !done else { return }
                done = true
                timer.cancel()
                callback(event)
            }
        }

        func whenClosed(_ callback: @escaping (ByteBuffer) -> Void) {
            if isClosed {
                callback(received)
            } else {
                closeWaiters.append(callback)
            }
        }
    }
}
