import HTTP2Frames
import NIOCore
import NIOSSL
import NIOTLS
import SwiftASN1
import X509

/// Waits for the TLS handshake, refuses protocols other than HTTP/2 (ALPN `h2`, or no ALPN at
/// all: APNs accepts HTTP/2 with prior knowledge, which clients such as aioapns rely on), reads
/// the client certificate, and replaces itself with the connection (``APNsSimulatorConnection``).
final class APNsSimulatorHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let shared: APNsSimulatorSharedState

    init(shared: APNsSimulatorSharedState) {
        self.shared = shared
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case TLSUserEvent.handshakeCompleted(let negotiatedProtocol) = event else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        guard negotiatedProtocol == nil || negotiatedProtocol == "h2" else {
            context.close(promise: nil)
            return
        }
        do {
            try configureHTTP2(context: context)
        } catch {
            context.close(promise: nil)
        }
    }

    private func configureHTTP2(context: ChannelHandlerContext) throws {
        let channel = context.channel
        let pipeline = channel.pipeline.syncOperations
        let clientCertificate = try pipeline.handler(type: NIOSSLHandler.self).peerCertificate
            .map(Self.describe(_:))
        let configuration = shared.configuration
        let fullLimit = clientCertificate != nil || !configuration.startWithOneStreamUntilAuthenticated
        let connection = APNsSimulatorConnection(
            shared: shared, eventLoop: channel.eventLoop, advertisesFullStreamLimit: fullLimit)
        connection.authentication.clientCertificate = clientCertificate
        try pipeline.addHandler(connection)
        pipeline.removeHandler(context: context, promise: nil)
    }

    /// Reads the environment (organizational unit) and topic (common name) of a client certificate.
    static func describe(_ certificate: NIOSSLCertificate) -> APNsSimulatorConnectionAuthentication.ClientCertificate {
        guard let der = try? certificate.toDERBytes(), let parsed = try? Certificate(derEncoded: der) else {
            return .init(environmentName: nil, topic: nil)
        }
        var environmentName: String?
        var topic: String?
        for relativeName in parsed.subject {
            for attribute in relativeName {
                if attribute.type == .RDNAttributeType.organizationalUnitName {
                    environmentName = String(describing: attribute.value)
                } else if attribute.type == .RDNAttributeType.commonName {
                    topic = String(describing: attribute.value)
                }
            }
        }
        return .init(environmentName: environmentName, topic: topic)
    }
}
