import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
public import PushFleetClient

/// A ``WebSocketTransport`` on SwiftNIO's NIOWebSocket, for Linux (where Foundation's
/// WebSocket API needs a libcurl built with WebSockets) and servers: `ws://` and `wss://` (TLS
/// with the system's trust roots, certificate and host name verified). Answers pings, masks
/// what it sends, answers the gateway's close frame with its code.
public struct NIOWebSocketTransport: WebSocketTransport {
    /// The upgrade did not happen, or the URL is not a WebSocket URL.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    private let group: any EventLoopGroup
    private let maxFrameBytes: Int

    public init(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, maxFrameBytes: Int = 1 << 20) {
        self.group = group
        self.maxFrameBytes = maxFrameBytes
    }

    private enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    public func withConnection(to url: URL, bearer: String, _ body: @Sendable (any WebSocketSession) async throws -> Void) async throws {
        guard let scheme = url.scheme, scheme == "ws" || scheme == "wss", let host = url.host else {
            throw Failure(description: "not a ws:// or wss:// URL: \(url)")
        }
        let tls = scheme == "wss"
        let port = url.port ?? (tls ? 443 : 80)
        let path = url.path.isEmpty ? "/" : url.path
        let target = url.query.map { "\(path)?\($0)" } ?? path
        let context = tls ? try NIOSSLContext(configuration: .makeClientConfiguration()) : nil
        let maxFrameBytes = self.maxFrameBytes
        let upgraded: EventLoopFuture<Upgrade> = try await ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let context {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: host))
                    }
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(
                        maxFrameSize: maxFrameBytes,
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                .websocket(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                            }
                        })
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: url.port.map { "\(host):\($0)" } ?? host)
                    headers.add(name: "Authorization", value: "Bearer \(bearer)")
                    headers.add(name: "Content-Length", value: "0")
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                        upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers),
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in
                            channel.close(promise: nil)
                            return channel.eventLoop.makeSucceededFuture(.refused)
                        })
                    // The welcome may come in the same read as the 101: the bytes after the
                    // HTTP response go on to the WebSocket decoder.
                    var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                    pipeline.leftOverBytesStrategy = .forwardBytes
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
                }
            }
        guard case .websocket(let channel) = try await upgraded.get() else {
            throw Failure(description: "the gateway at \(url) refused the WebSocket upgrade")
        }
        try await channel.executeThenClose { inbound, outbound in
            let session = Session(outbound: outbound)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await session.pump(inbound) }
                try await body(session)
                group.cancelAll()
            }
        }
    }

    private struct Session: WebSocketSession {
        let outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>
        let events: AsyncStream<WebSocketEvent>
        private let continuation: AsyncStream<WebSocketEvent>.Continuation

        init(outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>) {
            self.outbound = outbound
            (events, continuation) = AsyncStream.makeStream(of: WebSocketEvent.self)
        }

        /// Reads frames until the connection ends: text to the events (fragments joined), pings
        /// answered, the gateway's close answered with its code.
        func pump(_ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>) async {
            var ending: WebSocketEvent = .closed(code: nil, reason: "connection lost")
            var fragments: ByteBuffer?
            do {
                for try await frame in inbound {
                    var data = frame.unmaskedData
                    switch frame.opcode {
                    case .text where frame.fin:
                        continuation.yield(.text(String(buffer: data)))
                    case .text:
                        fragments = data
                    case .continuation:
                        guard var joined = fragments else { continue }
                        joined.writeBuffer(&data)
                        fragments = frame.fin ? nil : joined
                        if frame.fin { continuation.yield(.text(String(buffer: joined))) }
                    case .ping:
                        try await outbound.write(Self.frame(.pong, data))
                    case .connectionClose:
                        let code = data.readInteger(as: UInt16.self)
                        let reason = data.readString(length: data.readableBytes) ?? ""
                        ending = .closed(code: code, reason: reason)
                        var answer = ByteBuffer()
                        answer.writeInteger(code ?? 1000)
                        try? await outbound.write(Self.frame(.connectionClose, answer))
                        outbound.finish()
                    default:
                        continue
                    }
                    if case .closed(.some, _) = ending { break }
                }
            } catch {
                ending = .closed(code: nil, reason: "\(error)")
            }
            continuation.yield(ending)
            continuation.finish()
        }

        func send(text: String) async throws {
            try await outbound.write(Self.frame(.text, ByteBuffer(string: text)))
        }

        func close() async {
            var data = ByteBuffer()
            data.writeInteger(UInt16(1000))
            try? await outbound.write(Self.frame(.connectionClose, data))
            outbound.finish()
        }

        /// A client frame: masked (RFC 6455 §5.3).
        static func frame(_ opcode: WebSocketOpcode, _ data: ByteBuffer) -> WebSocketFrame {
            WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: data)
        }
    }
}
