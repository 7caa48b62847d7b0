import NIOCore
import NIOHPACK
import NIOPosix
import NIOSSL

/// One HTTP/2 connection to APNs, pinned to its event loop. The pool decides how many streams
/// it carries at a time.
final class APNsConnection: Sendable {
    let id: Int
    let channel: any Channel
    private let handler: NIOLoopBound<APNsConnectionHandler>

    private init(id: Int, channel: any Channel, handler: NIOLoopBound<APNsConnectionHandler>) {
        self.id = id
        self.channel = channel
        self.handler = handler
    }

    /// Opens TCP, TLS (ALPN h2, verification on) and HTTP/2 (spoken by ``APNsConnectionHandler``
    /// itself). The connection is usable once
    /// `events.ready` reports the server's first SETTINGS.
    static func connect(
        id: Int,
        eventLoop: any EventLoop,
        endpoint: APNsClientConfiguration.Endpoint,
        sslContext: NIOSSLContext,
        connectTimeout: TimeAmount,
        pingInterval: TimeAmount?,
        pingTimeout: TimeAmount,
        events: APNsConnectionHandler.Events
    ) -> EventLoopFuture<APNsConnection> {
        // SNI carries names only; for an IP address the certificate is checked against the IP.
        let serverHostname = endpoint.host.isIPAddress ? nil : endpoint.host
        return ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
                    try pipeline.addHandler(
                        APNsConnectionHandler(events: events, pingInterval: pingInterval, pingTimeout: pingTimeout))
                }
            }
            .connect(host: endpoint.host, port: endpoint.port)
            .flatMapThrowing { channel in
                let handler = try channel.pipeline.syncOperations.handler(type: APNsConnectionHandler.self)
                return APNsConnection(id: id, channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop))
            }
    }

    /// Sends a request on a new stream.
    func execute(headers: HPACKHeaders, payload: ByteBuffer, timeout: TimeAmount) -> EventLoopFuture<APNsStreamOutcome> {
        let eventLoop = channel.eventLoop
        let promise = eventLoop.makePromise(of: APNsStreamOutcome.self)
        if eventLoop.inEventLoop {
            handler.value.send(headers: headers, payload: payload, timeout: timeout, promise: promise)
        } else {
            let handler = self.handler
            eventLoop.execute {
                handler.value.send(headers: headers, payload: payload, timeout: timeout, promise: promise)
            }
        }
        return promise.futureResult
    }

    /// One request of a batch: what ``execute(_:)`` sends and where its outcome goes.
    struct Submission: Sendable {
        var headers: HPACKHeaders
        var payload: ByteBuffer
        var timeout: TimeAmount
        var request: APNsStreamRequest
    }

    /// Sends requests on new streams, in one trip to the connection's event loop: their frames
    /// leave in one write. Each outcome goes where its ``Submission/request`` says.
    func execute(_ submissions: [Submission]) {
        let eventLoop = channel.eventLoop
        if eventLoop.inEventLoop {
            for submission in submissions {
                handler.value.send(headers: submission.headers, payload: submission.payload, timeout: submission.timeout, request: submission.request)
            }
        } else {
            let handler = self.handler
            eventLoop.execute {
                for submission in submissions {
                    handler.value.send(
                        headers: submission.headers, payload: submission.payload, timeout: submission.timeout, request: submission.request)
                }
            }
        }
    }

    func close() {
        channel.close(promise: nil)
    }
}

extension String {
    /// Whether this is a literal IPv4 or IPv6 address.
    var isIPAddress: Bool {
        (try? SocketAddress(ipAddress: self, port: 0)) != nil
    }
}
