import APNsCore
import Atomics
import HTTP2Frames
import NIOCore
import NIOSSL
import NIOTLS

/// The legacy binary interface as the simulator serves it, on ports of their own (TLS with a
/// client certificate from the simulator's CA, for the simulator's environment and one of its
/// bundle ids; any other connection is closed):
///
/// - the gateway reads notification frames (command 2) back to back and takes each valid one at
///   once (counted as accepted, as an HTTP/2 200). The first frame it refuses gets an error
///   response (command 8: status, identifier) and the connection is closed; the frames behind it
///   are dropped unread. It refuses a token APNs never issued (``APNsSimulatorDevices/bad``:
///   `InvalidToken`), a token of the wrong size, a missing or oversized payload; a token whose
///   app was uninstalled is taken, as Apple's gateway took it, and listed by the feedback service.
///   Faults: ``APNsSimulatorFaults/binaryShutdownEveryFrames`` answers `Shutdown` naming the last
///   frame taken, ``APNsSimulatorFaults/connectionResetEveryStreams`` closes without an answer.
/// - the feedback service writes one tuple per uninstalled token (the time it stopped being
///   valid, in seconds; the token) and closes.
final class APNsSimulatorBinaryHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    enum Role {
        case gateway
        case feedback
    }

    private let shared: APNsSimulatorSharedState
    private let role: Role
    private var authenticated = false
    private var closing = false
    private var received = ByteBuffer()
    private var framesTaken = 0
    private var lastTaken: UInt32 = 0

    init(shared: APNsSimulatorSharedState, role: Role) {
        self.shared = shared
        self.role = role
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case TLSUserEvent.handshakeCompleted = event else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        let certificate = (try? context.pipeline.syncOperations.handler(type: NIOSSLHandler.self).peerCertificate)?
            .map(APNsSimulatorHandshakeHandler.describe(_:))
        let configuration = shared.configuration
        guard let certificate, certificate.environmentName == configuration.environment.rawValue, let topic = certificate.topic,
            configuration.bundleIDs.contains(topic)
        else {
            context.close(promise: nil)
            return
        }
        authenticated = true
        if role == .feedback {
            var tuples = ByteBuffer()
            for (hex, since) in configuration.devices.unregistered.sorted(by: { $0.key < $1.key }) {
                guard let token = try? DeviceToken(hex: hex) else { continue }
                APNsBinaryFrame.writeFeedbackTuple(time: UInt32(clamping: since / 1000), token: token.bytes, into: &tuples)
            }
            context.writeAndFlush(wrapOutboundOut(tuples)).whenComplete { _ in context.close(promise: nil) }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard authenticated, role == .gateway, !closing else { return }
        var bytes = unwrapInboundIn(data)
        received.writeBuffer(&bytes)
        let loopState = shared.loopState(for: context.eventLoop)
        let faults = loopState.faults
        while !closing {
            switch APNsBinaryFrame.readNotification(from: &received) {
            case .incomplete:
                return
            case .malformed:
                refuse(.unknown, identifier: 0, context: context, loopState: loopState)
            case .notification(let frame):
                loopState.requests += 1
                let identifier = frame.identifier ?? 0
                if let status = Self.check(frame, devices: shared.configuration.devices) {
                    refuse(status, identifier: identifier, context: context, loopState: loopState)
                    continue
                }
                if let every = faults.connectionResetEveryStreams, shared.streams.wrappingIncrementThenLoad(ordering: .relaxed).isMultiple(of: every)
                {
                    shared.connectionResets.wrappingIncrement(ordering: .relaxed)
                    closing = true
                    context.close(promise: nil)
                    return
                }
                let token = frame.token.map { (try? DeviceToken(bytes: $0))?.hex ?? "" } ?? ""
                loopState.accepted += 1
                if shared.configuration.tracksDuplicates {
                    let key = APNsSimulatorLoopState.NotificationKey(
                        deviceToken: token, apnsIDOrPayloadHash: "payload:\((frame.payload ?? []).hashValue)")
                    loopState.acceptances[key, default: 0] += 1
                }
                framesTaken += 1
                lastTaken = identifier
                if let every = faults.binaryShutdownEveryFrames, framesTaken.isMultiple(of: every) {
                    refuse(.shutdown, identifier: lastTaken, context: context, loopState: loopState)
                }
            }
        }
    }

    /// Answers an error response and closes; frames behind it are never read.
    private func refuse(_ status: APNsBinaryStatus, identifier: UInt32, context: ChannelHandlerContext, loopState: APNsSimulatorLoopState) {
        closing = true
        if status != .shutdown {
            loopState.rejections[status.reason, default: 0] += 1
        }
        var answer = ByteBuffer()
        APNsBinaryFrame.writeErrorResponse(status: status, identifier: identifier, into: &answer)
        context.writeAndFlush(wrapOutboundOut(answer)).whenComplete { _ in context.close(promise: nil) }
    }

    /// Apple's checks of one frame, in its order; `nil` when the frame is taken.
    static func check(_ frame: APNsBinaryFrame.Notification, devices: APNsSimulatorDevices) -> APNsBinaryStatus? {
        if frame.unknownItem != nil { return .invalidFrameItemID }
        guard let token = frame.token, !token.isEmpty else { return .missingDeviceToken }
        guard (32...100).contains(token.count) else { return .invalidTokenSize }
        guard let payload = frame.payload, !payload.isEmpty else { return .missingPayload }
        guard payload.count <= APNsBinaryFrame.maxPayloadBytes else { return .invalidPayloadSize }
        guard let hex = try? DeviceToken(bytes: token).hex, !devices.bad.contains(hex) else { return .invalidToken }
        return nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
