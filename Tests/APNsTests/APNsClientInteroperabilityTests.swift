import APNs
import APNsCore
import APNsSimulator
import Crypto
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization
import Testing

/// The APNs client against a server built on NIO's own HTTP/2 implementation (`NIOHTTP2Handler`
/// with its stream multiplexer, flow control and HPACK): the client and the simulator share this
/// project's frame code, so a server written by others checks what the client puts on the wire
/// and how it reads answers, GOAWAY included.
@Suite("APNs client against NIO's HTTP/2 server")
struct APNsClientInteroperabilityTests {
    /// What the server saw, by device token.
    final class Seen: Sendable {
        struct Request: Sendable, Hashable {
            var path: String
            var topic: String?
            var pushType: String?
            var authorization: String?
            var apnsID: String?
            var payload: String
        }

        private let requests = Mutex<[String: [Request]]>([:])
        private let completed = Atomic<Int>(0)
        let connections = Atomic<Int>(0)

        func add(_ request: Request) -> Int {
            let token = String(request.path.dropFirst("/3/device/".count))
            requests.withLock { $0[token, default: []].append(request) }
            return completed.add(1, ordering: .relaxed).newValue
        }

        var all: [String: [Request]] { requests.withLock { $0 } }
    }

    /// Answers every request with 200 and its `apns-id`; sends GOAWAY every `goAwayEvery` requests.
    final class StreamResponder: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame.FramePayload
        typealias OutboundOut = HTTP2Frame.FramePayload

        private let seen: Seen
        private let goAwayEvery: Int?
        private var headers = HPACKHeaders()
        private var body = ByteBuffer()

        init(seen: Seen, goAwayEvery: Int?) {
            self.seen = seen
            self.goAwayEvery = goAwayEvery
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .headers(let frame):
                headers = frame.headers
                if frame.endStream { respond(context: context) }
            case .data(let frame):
                if case .byteBuffer(var bytes) = frame.data { body.writeBuffer(&bytes) }
                if frame.endStream { respond(context: context) }
            default:
                break
            }
        }

        private func respond(context: ChannelHandlerContext) {
            let apnsID = headers.first(name: "apns-id")
            let count = seen.add(
                .init(
                    path: headers.first(name: ":path") ?? "", topic: headers.first(name: "apns-topic"),
                    pushType: headers.first(name: "apns-push-type"), authorization: headers.first(name: "authorization"),
                    apnsID: apnsID, payload: String(buffer: body)))
            var answer: HPACKHeaders = [":status": "200"]
            if let apnsID { answer.add(name: "apns-id", value: apnsID) }
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: answer, endStream: true))), promise: nil)
            if let goAwayEvery, count.isMultiple(of: goAwayEvery), let parent = context.channel.parent {
                let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .maxID, errorCode: .noError, opaqueData: nil))
                parent.writeAndFlush(goAway, promise: nil)
            }
        }
    }

    /// Runs `body` against a TLS + HTTP/2 server of NIO's, and a client that trusts it.
    ///
    /// With `goAwayEvery` the client may send each notification up to three times: the server's
    /// GOAWAY names no last stream (2^31-1, "any stream may be processed"), and once its last
    /// open stream closes NIO's server answers the DATA of a stream the client opened in that
    /// moment with a connection error and closes. The client cannot know whether a stream
    /// in flight on a connection that ends that way was processed, so it reports it as a lost
    /// connection (retryable); a caller that allows attempts sends it again. The test still
    /// holds each notification to one arrival at the server.
    static func withServer(
        goAwayEvery: Int? = nil, _ body: (APNsClient, APNsRequest, Seen) async throws -> Void
    ) async throws {
        let identity = try APNsSimulatorTLSIdentity.generate()
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(identity.serverCertificatePEM.utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.serverPrivateKeyPEM.utf8), format: .pem)))
        tls.applicationProtocols = ["h2"]
        let sslContext = try NIOSSLContext(configuration: tls)
        let seen = Seen()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let server = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                seen.connections.add(1, ordering: .relaxed)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                }.flatMap {
                    channel.configureHTTP2Pipeline(mode: .server) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(StreamResponder(seen: seen, goAwayEvery: goAwayEvery))
                        }
                    }.map { _ in }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let key = P256.Signing.PrivateKey()
        let client = try APNsClient(
            configuration: APNsClientConfiguration(
                endpointOverride: .init(host: "127.0.0.1", port: server.localAddress!.port!),
                trustRoots: .pem(identity.certificateAuthorityPEM), connectionsPerPool: 2,
                maxConcurrentStreamsPerConnection: 100, connectionSpacing: .milliseconds(1),
                maxAttempts: goAwayEvery == nil ? 1 : 3))
        let notification = APNsRequest(
            credential: .token(teamID: "TEAM123456", keyID: "KEY1234567", privateKeyPEM: key.pemRepresentation),
            environment: .production, deviceToken: SimulatorHarness.token(0), bundleID: "com.example.app",
            payload: ByteBuffer(string: #"{"aps":{"alert":"interop"}}"#))
        do {
            try await body(client, notification, seen)
        } catch {
            await client.shutdown()
            try? await server.close()
            try? await group.shutdownGracefully()
            throw error
        }
        await client.shutdown()
        try await server.close()
        try await group.shutdownGracefully()
    }

    @Test("batches and single sends: every request reaches NIO's server once, as sent, and its answer the caller", arguments: [nil, 700])
    func requestsAndAnswers(goAwayEvery: Int?) async throws {
        try await Self.withServer(goAwayEvery: goAwayEvery) { client, notification, seen in
            let tokens = (0..<3_000).map { SimulatorHarness.token($0) }
            let answers = CallbackResults<String>()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for start in stride(from: 0, to: 2_900, by: 250) {
                    let batch = Array(tokens[start..<min(start + 250, 2_900)])
                    group.addTask {
                        await client.send(notification, to: batch) { index, result in
                            let text = (try? result.get()).map { "\($0.status) \($0.apnsID != nil)" } ?? "\(result)"
                            answers.update { $0[start + index] = text }
                        }
                    }
                }
                for index in 2_900..<3_000 {
                    group.addTask {
                        var request = notification
                        request.deviceToken = tokens[index]
                        let response = try await client.send(request)
                        answers.update { $0[index] = "\(response.status) \(response.apnsID != nil)" }
                    }
                }
                try await group.waitForAll()
            }
            let results = answers.all
            #expect(results.count == 3_000)
            #expect(results.values.allSatisfy { $0 == "200 true" }, "\(results.filter { $0.value != "200 true" }.prefix(3))")
            let requests = seen.all
            #expect(requests.count == 3_000)
            for token in tokens {
                guard let received = requests[token.hex], received.count == 1, let request = received.first else {
                    Issue.record("token \(token.hex) reached the server \(requests[token.hex]?.count ?? 0) times")
                    continue
                }
                #expect(request.topic == "com.example.app" && request.pushType == "alert")
                #expect(request.authorization?.hasPrefix("bearer ey") == true)
                #expect(request.apnsID.flatMap(APNsID.init) != nil)
                #expect(request.payload == #"{"aps":{"alert":"interop"}}"#)
            }
            #expect(Set(requests.values.compactMap { $0.first?.apnsID }).count == 3_000, "every notification has its own apns-id")
            let connections = seen.connections.load(ordering: .relaxed)
            if let goAwayEvery {
                // Each GOAWAY retires a connection; the pool opens another while requests wait
                // for a stream. The last one may come when all that remains is already in flight.
                #expect(connections >= 1 + 3_000 / goAwayEvery, "\(connections) connections")
            } else {
                #expect(connections == 2)
            }
        }
    }
}
