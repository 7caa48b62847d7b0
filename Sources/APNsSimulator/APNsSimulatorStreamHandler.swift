import Atomics
import APNsCore
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Serves one HTTP/2 stream: collects the request, applies faults, validates, and answers with
/// APNs's status, `apns-id` and JSON reason.
final class APNsSimulatorStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private static let statusStrings: [Int: String] = Dictionary(
        uniqueKeysWithValues: [200, 400, 403, 404, 405, 410, 413, 429, 500, 503].map { ($0, String($0)) })

    private let connection: APNsSimulatorConnection
    private var headers: HPACKHeaders?
    private var body: ByteBuffer?

    init(connection: APNsSimulatorConnection) {
        self.connection = connection
    }

    func handlerAdded(context: ChannelHandlerContext) {
        connection.streamOpened(try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID))
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        connection.streamClosed()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if headers == nil {
                headers = frame.headers
            }
            if frame.endStream { requestComplete(context: context) }
        case .data(let frame):
            guard case .byteBuffer(let chunk) = frame.data else { return }
            if body == nil {
                body = chunk
            } else {
                body!.writeImmutableBuffer(chunk)
            }
            if frame.endStream { requestComplete(context: context) }
        default:
            break
        }
    }

    private func requestComplete(context: ChannelHandlerContext) {
        guard !connection.isResetting else { return }
        let shared = connection.shared
        let faults = shared.configuration.faults
        let loopState = connection.loopState
        loopState.requests += 1
        if faults.goAwayEveryStreams != nil || faults.connectionResetEveryStreams != nil {
            let count = shared.streams.wrappingIncrementThenLoad(ordering: .relaxed)
            if let every = faults.connectionResetEveryStreams, count.isMultiple(of: every) {
                shared.connectionResets.wrappingIncrement(ordering: .relaxed)
                connection.reset()
                return
            }
            if let every = faults.goAwayEveryStreams, count.isMultiple(of: every) {
                shared.goAways.wrappingIncrement(ordering: .relaxed)
                connection.goAway(lastStreamID: connection.highestStreamID, errorCode: .noError, reason: nil)
            }
        }
        if faults.stallRate > 0, Double.random(in: 0..<1, using: &loopState.random) < faults.stallRate {
            loopState.stalled += 1
            return
        }

        let requestHeaders = headers ?? HPACKHeaders()
        let payload = body ?? ByteBuffer()
        let now = APNsSimulatorSharedState.nowMilliseconds()
        var outcome = shared.validator.validate(
            headers: requestHeaders, body: payload, authentication: &connection.authentication, nowMilliseconds: now)
        if case .success(let notification) = outcome {
            if let reason = injectedFailure(faults: faults, loopState: loopState) {
                outcome = .failure(.init(reason, deviceToken: notification.deviceToken))
            } else if shared.exceedsDeviceRate(notification.deviceToken, nowMilliseconds: now) {
                outcome = .failure(.init(.tooManyRequests, deviceToken: notification.deviceToken))
            } else {
                connection.authentication.hasSucceeded = true
                connection.advertiseFullStreamLimit()
            }
        }
        let responseAPNsID = requestHeaders.first(name: "apns-id") ?? APNsID.random(using: &loopState.random).uuidString
        if let delay = shared.configuration.latency.sampleNanoseconds(using: &loopState.random) {
            context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(delay)) {
                self.respond(context: context, outcome: outcome, apnsID: responseAPNsID, payload: payload)
            }
        } else {
            respond(context: context, outcome: outcome, apnsID: responseAPNsID, payload: payload)
        }
    }

    private func injectedFailure(faults: APNsSimulatorFaults, loopState: APNsSimulatorLoopState) -> APNsReason? {
        let total = faults.internalServerErrorRate + faults.serviceUnavailableRate + faults.shutdownRate
        guard total > 0 else { return nil }
        let draw = Double.random(in: 0..<1, using: &loopState.random)
        if draw < faults.internalServerErrorRate { return .internalServerError }
        if draw < faults.internalServerErrorRate + faults.serviceUnavailableRate { return .serviceUnavailable }
        if draw < total { return .shutdown }
        return nil
    }

    private func respond(
        context: ChannelHandlerContext,
        outcome: Result<APNsSimulatorRequestValidator.Notification, APNsSimulatorRequestValidator.Rejection>,
        apnsID: String, payload: ByteBuffer
    ) {
        guard !connection.isResetting, context.channel.isActive else { return }
        let loopState = connection.loopState
        let configuration = connection.shared.configuration
        switch outcome {
        case .success(let notification):
            let headers = HPACKHeaders([(":status", "200"), ("apns-id", apnsID)])
            let promise = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(
                wrapOutboundOut(.headers(.init(headers: headers, endStream: true))), promise: promise)
            promise.futureResult.assumeIsolated().whenSuccess {
                loopState.accepted += 1
                if configuration.tracksDuplicates {
                    let key = APNsSimulatorLoopState.NotificationKey(
                        deviceToken: notification.deviceToken,
                        apnsIDOrPayloadHash: notification.apnsID?.lowercased() ?? "payload:\(payload.hashValue)")
                    loopState.acceptances[key, default: 0] += 1
                }
            }
            if configuration.recordsRequests {
                loopState.records.append(
                    APNsSimulatorRequestRecord(
                        deviceToken: notification.deviceToken, topic: notification.topic,
                        pushType: notification.pushType.rawValue, priority: notification.priority,
                        expiration: notification.expiration, collapseID: notification.collapseID,
                        requestAPNsID: notification.apnsID, responseAPNsID: apnsID, status: 200, reason: nil,
                        payloadBytes: payload.readableBytes))
            }
        case .failure(let rejection):
            let status = rejection.reason.documentedStatus ?? 400
            let headers = HPACKHeaders([
                (":status", Self.statusStrings[status] ?? String(status)), ("apns-id", apnsID),
                ("content-type", "application/json"),
            ])
            var json = #"{"reason":"\#(rejection.reason.rawValue)""#
            if let timestamp = rejection.timestamp { json += #","timestamp":\#(timestamp)"# }
            json += "}"
            context.write(wrapOutboundOut(.headers(.init(headers: headers, endStream: false))), promise: nil)
            context.writeAndFlush(
                wrapOutboundOut(.data(.init(data: .byteBuffer(ByteBuffer(string: json)), endStream: true))),
                promise: nil)
            loopState.rejections[rejection.reason.rawValue, default: 0] += 1
            if configuration.recordsRequests {
                loopState.records.append(
                    APNsSimulatorRequestRecord(
                        deviceToken: rejection.deviceToken, topic: self.headers?.first(name: "apns-topic"),
                        pushType: nil, priority: nil, expiration: nil, collapseID: nil,
                        requestAPNsID: self.headers?.first(name: "apns-id"), responseAPNsID: apnsID,
                        status: status, reason: rejection.reason.rawValue, payloadBytes: payload.readableBytes))
            }
        }
    }
}
