import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import PushCore
import Synchronization

/// The client side of `pushfleet-bench online`: many WebSocket connections on SwiftNIO's
/// NIOWebSocket, one handler each, on one event loop group. Against the gateway a connection
/// acks every `push` at once and records when it came; against the echo server it sends
/// messages and counts their echoes. Both ways a message costs one frame each way.
final class WebSocketLoad: Sendable {
    /// What the connections heard, shared by all of them.
    final class Tally: Sendable {
        private struct State {
            var pushes = 0
            var echoes = 0
            var lastAt = ContinuousClock.now
            /// Per job id: when it was published (set by the benchmark before it publishes).
            var publishedAt: [String: ContinuousClock.Instant] = [:]
            /// Milliseconds from a job's publication to each of its acks.
            var latencies: [Double] = []
            /// Per device (connections opened with one): pushes received, acks sent.
            var received: [Int: Int] = [:]
            var acked: [Int: Int] = [:]
            /// Per connection label: the devices that received a push on such a connection.
            var receivedVia: [String: Set<Int>] = [:]
        }

        private let state = Mutex(State())

        func published(_ jobID: String, at instant: ContinuousClock.Instant) {
            state.withLock { $0.publishedAt[jobID] = instant }
        }

        func pushed(jobID: String, device: Int? = nil, via label: String? = nil) {
            let now = ContinuousClock.now
            state.withLock { state in
                state.pushes += 1
                state.lastAt = now
                if let published = state.publishedAt[jobID] {
                    state.latencies.append((now - published).seconds * 1_000)
                }
                if let device { state.received[device, default: 0] += 1 }
                if let device, let label { state.receivedVia[label, default: []].insert(device) }
            }
        }

        /// The devices that received a push on a connection labelled `label`.
        func received(via label: String) -> Set<Int> {
            state.withLock { $0.receivedVia[label] ?? [] }
        }

        /// Device `device` sent an ack.
        func acked(device: Int) {
            state.withLock { $0.acked[device, default: 0] += 1 }
        }

        /// Pushes received and acks sent, per device, since the last call; then forgotten.
        func takeDeviceCounts() -> (received: [Int: Int], acked: [Int: Int]) {
            state.withLock { state in
                defer { (state.received, state.acked) = ([:], [:]) }
                return (state.received, state.acked)
            }
        }

        /// Pushes received per device so far (not forgotten).
        var received: [Int: Int] { state.withLock { $0.received } }

        /// Devices matching `condition` that sent an ack so far.
        func ackedCount(where condition: (Int) -> Bool) -> Int {
            state.withLock { $0.acked.keys.count(where: condition) }
        }

        func echoed() {
            let now = ContinuousClock.now
            state.withLock {
                $0.echoes += 1
                $0.lastAt = now
            }
        }

        var pushes: Int { state.withLock { $0.pushes } }
        var echoes: Int { state.withLock { $0.echoes } }
        /// When the last push or echo arrived.
        var lastAt: ContinuousClock.Instant { state.withLock { $0.lastAt } }

        /// The latencies recorded since the last call, then forgotten.
        func takeLatencies() -> [Double] {
            state.withLock { state in
                defer { state.latencies = [] }
                return state.latencies
            }
        }
    }

    /// The upgraded connections.
    final class Channels: Sendable {
        private let all = Mutex<[any Channel]>([])

        func add(_ channel: any Channel) {
            all.withLock { $0.append(channel) }
        }

        var list: [any Channel] { all.withLock { $0 } }
    }

    let tally = Tally()
    private let group: MultiThreadedEventLoopGroup
    private let channels = Channels()

    init(threads: Int) {
        group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
    }

    /// Opens a connection to `path` on `port` and waits for its first text frame (the gateway's
    /// welcome; the echo server's answer to nothing is none, so `awaitWelcome` is false there).
    func connect(port: Int, path: String, awaitWelcome: Bool, options: LoadConnectionOptions = LoadConnectionOptions()) async throws {
        let loop = group.next()
        let welcomed = loop.makePromise(of: Void.self)
        let timeout = loop.scheduleTask(in: .seconds(10)) {
            welcomed.fail(BenchmarkError.failed("no welcome on \(path.prefix(40)) within 10 s"))
        }
        defer { timeout.cancel() }
        let (tally, channels) = (self.tally, self.channels)
        let upgraded: EventLoopFuture<Bool> = try await ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketClientUpgrader<Bool>(
                        maxFrameSize: 1 << 16,
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(
                                    LoadConnectionHandler(tally: tally, channels: channels, welcomed: welcomed, options: options))
                                return true
                            }
                        })
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: "127.0.0.1:\(port)")
                    headers.add(name: "Content-Length", value: "0")
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration(
                        upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers),
                        upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(false) })
                    // The gateway's welcome may come in the same read as its 101: the bytes after
                    // the HTTP response go on to the WebSocket decoder (NIO drops them by default).
                    var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
                    pipeline.leftOverBytesStrategy = .forwardBytes
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
                }
            }
        guard try await upgraded.get() else { throw BenchmarkError.failed("the WebSocket upgrade of \(path) was refused") }
        if awaitWelcome {
            try await welcomed.futureResult.get()
        } else {
            welcomed.succeed()
        }
    }

    /// Sends `message` once on every connection (the echo reference).
    func sendToAll(_ message: [UInt8]) {
        for channel in channels.list {
            channel.pipeline.fireUserInboundEventTriggered(LoadSendEvent(bytes: message))
        }
    }

    var connectionCount: Int { channels.list.count }

    func shutdown() async {
        for channel in channels.list { try? await channel.close() }
        try? await group.shutdownGracefully()
    }
}

/// Asks a connection to send a text frame.
struct LoadSendEvent: Sendable {
    var bytes: [UInt8]
}

/// How one load connection behaves: which device it is (for per-device counts), when it acks a
/// push, and what happens when it closes (the fault scenarios reconnect elsewhere).
struct LoadConnectionOptions: Sendable {
    enum AckPolicy: Sendable, Equatable {
        case immediately
        /// As an app that takes a while to hand the message over.
        case after(TimeAmount)
        case never
    }

    /// Counted per device in ``WebSocketLoad/Tally`` when set.
    var device: Int?
    /// Counted per device and label too (``WebSocketLoad/Tally/received(via:)``): which gateway
    /// a push came from.
    var label: String?
    var ack = AckPolicy.immediately
    /// Called once when the connection has closed, whoever closed it.
    var closed: (@Sendable () -> Void)?
}

/// One load connection: acks pushes, counts echoes, answers pings, masks what it sends.
private final class LoadConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let tally: WebSocketLoad.Tally
    private let channels: WebSocketLoad.Channels
    private let welcomed: EventLoopPromise<Void>
    private let options: LoadConnectionOptions
    private var welcome = true

    init(tally: WebSocketLoad.Tally, channels: WebSocketLoad.Channels, welcomed: EventLoopPromise<Void>, options: LoadConnectionOptions) {
        self.tally = tally
        self.channels = channels
        self.welcomed = welcomed
        self.options = options
    }

    func handlerAdded(context: ChannelHandlerContext) {
        channels.add(context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        options.closed?()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            let bytes = Array(frame.unmaskedData.readableBytesView)
            if welcome {
                welcome = false
                if bytes.starts(with: Array(#"{"type":"welcome""#.utf8)) {
                    welcomed.succeed()
                    return
                }
            }
            guard let object = try? JSONValue(parsing: Data(bytes)).objectValue else { return }
            if object["type"]?.stringValue == "push", let id = object["id"]?.stringValue {
                tally.pushed(jobID: object["job"]?.stringValue ?? "", device: options.device, via: options.label)
                let frame: JSONValue = ["type": "ack", "id": .string(id)]
                let ack = Array(frame.compactData())
                switch options.ack {
                case .immediately:
                    self.ack(ack, context: context)
                case .after(let delay):
                    context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
                        if context.channel.isActive { self.ack(ack, context: context) }
                    }
                case .never:
                    break
                }
            } else if object["type"]?.stringValue == "echo" {
                tally.echoed()
            }
        case .ping:
            send(Array(frame.unmaskedData.readableBytesView), opcode: .pong, context: context)
        case .connectionClose:
            context.close(promise: nil)
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? LoadSendEvent {
            send(event.bytes, opcode: .text, context: context)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    private func ack(_ bytes: [UInt8], context: ChannelHandlerContext) {
        if let device = options.device { tally.acked(device: device) }
        send(bytes, opcode: .text, context: context)
    }

    private func send(_ bytes: [UInt8], opcode: WebSocketOpcode, context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        context.writeAndFlush(
            wrapOutboundOut(WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: buffer)), promise: nil)
    }
}

/// `pushfleet-bench websocket-echo`'s server: answers every text frame with its payload, on
/// the same library and framing as the gateway (NIOWebSocket), as the ceiling of a round trip.
enum WebSocketEcho {
    static func serve(port: Int, threads: Int) async throws -> any Channel {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        return try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                let upgrader = NIOWebSocketServerUpgrader(
                    shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
                    upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(EchoHandler()) }
                    })
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
    }

    private final class EchoHandler: ChannelInboundHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.opcode {
            case .text:
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: frame.unmaskedData)), promise: nil)
            case .connectionClose:
                context.close(promise: nil)
            default:
                break
            }
        }
    }
}
