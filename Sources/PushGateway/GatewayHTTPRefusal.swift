import NIOCore
import NIOHTTP1
import PushCore

/// Answers the requests that are not WebSocket upgrades to a connect path: 426 on a connect
/// path (the upgrade headers are missing), 404 elsewhere. Removed from the pipeline when a
/// connection upgrades.
final class GatewayHTTPRefusal: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var head: HTTPRequestHead?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body:
            break
        case .end:
            guard let head else { return }
            self.head = nil
            let isConnectPath = GatewayRequest(target: head.uri, authorization: nil) != nil
            let (status, error, message): (HTTPResponseStatus, String, String) =
                isConnectPath
                ? (.upgradeRequired, "upgrade-required", "this path takes a WebSocket upgrade (GET with Upgrade: websocket)")
                : (.notFound, "not-found", "app instances connect at GET /v1/apps/{app}/connect with a WebSocket upgrade")
            // The API's error shape (`APIError`): {"error": {"code", "message", "field"}}.
            let json: JSONValue = ["error": ["code": .string(error), "message": .string(message), "field": .null]]
            let body = Array(json.compactData())
            var headers = HTTPHeaders()
            headers.add(name: "content-type", value: "application/json")
            headers.add(name: "content-length", value: "\(body.count)")
            if isConnectPath { headers.add(name: "upgrade", value: "websocket") }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
            var buffer = context.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
