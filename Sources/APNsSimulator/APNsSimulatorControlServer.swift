import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// The plain HTTP/1.1 control endpoint: `GET /counters` answers the counters as JSON,
/// `GET /accepted` the number of notifications accepted so far (cheap enough to poll),
/// `POST /reset` zeroes them, `GET /ca.pem` answers the CA certificate.
enum APNsSimulatorControlServer {
    static func bind(
        group: any EventLoopGroup, host: String, port: Int, simulator: APNsSimulator
    ) async throws -> any Channel {
        try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(simulator: simulator))
                }
            }
            .bind(host: host, port: port).get()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        private let simulator: APNsSimulator
        private var request: HTTPRequestHead?

        init(simulator: APNsSimulator) {
            self.simulator = simulator
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                request = head
            case .body:
                break
            case .end:
                guard let head = request else { return }
                request = nil
                let simulator = self.simulator
                context.eventLoop.makeFutureWithTask {
                    await Self.answer(head: head, simulator: simulator)
                }.assumeIsolated().whenSuccess { answer in
                    self.write(context: context, status: answer.status, body: answer.body, keepAlive: head.isKeepAlive)
                }
            }
        }

        private static func answer(head: HTTPRequestHead, simulator: APNsSimulator) async -> (status: HTTPResponseStatus, body: String) {
            do {
                switch (head.method, head.uri) {
                case (.GET, "/counters"):
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys]
                    let data = try encoder.encode(try await simulator.counters())
                    return (.ok, String(decoding: data, as: UTF8.self))
                case (.GET, "/accepted"):
                    return (.ok, String(try await simulator.acceptedCount()))
                case (.POST, "/reset"):
                    try await simulator.reset()
                    return (.ok, "{}")
                case (.GET, "/ca.pem"):
                    return (.ok, simulator.tlsIdentity.certificateAuthorityPEM)
                default:
                    return (.notFound, #"{"error":"not found"}"#)
                }
            } catch {
                return (.internalServerError, #"{"error":"\#(error)"}"#)
            }
        }

        private func write(context: ChannelHandlerContext, status: HTTPResponseStatus, body: String, keepAlive: Bool) {
            var headers = HTTPHeaders([("content-type", "application/json"), ("content-length", String(body.utf8.count))])
            if !keepAlive { headers.add(name: "connection", value: "close") }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                if !keepAlive { context.close(promise: nil) }
            }
        }
    }
}
