import Atomics
import APNsCore
import Foundation
import HTTP2Frames
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Serves every stream of one connection at the frame level: collects each request, applies
/// faults, validates, and answers with APNs's status, `apns-id` and JSON reason.
///
/// NIO's HTTP/2 handler runs without a stream multiplexer here, as in the client: a child
/// `Channel` per stream cost the simulator more than the request itself, and a benchmark's
/// simulator shares the machine with the client it measures. Answers written in one event loop
/// tick go out with one flush.
final class APNsSimulatorRequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private typealias Outcome = Result<APNsSimulatorRequestValidator.Notification, APNsSimulatorRequestValidator.Rejection>

    /// A stream the client opened; it stays here until NIO reports it closed.
    private struct Stream {
        var headers: HPACKHeaders?
        var body: ByteBuffer?
    }

    private static let statusStrings: [Int: String] = Dictionary(
        uniqueKeysWithValues: [200, 400, 403, 404, 405, 410, 413, 429, 500, 503].map { ($0, String($0)) })

    private let connection: APNsSimulatorConnection
    private var streams: [HTTP2StreamID: Stream] = [:]
    private let flushes = FlushCoalescer()

    init(connection: APNsSimulatorConnection) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !connection.isUnresponsive else { return }
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            if streams[frame.streamID] == nil {
                if let limit = connection.loopState.faults.unresponsiveAfterStreams,
                    connection.streamsOpened >= limit
                {
                    connection.becomeUnresponsive()
                    return
                }
                streams[frame.streamID] = Stream(headers: headers.headers)
                connection.streamOpened(frame.streamID)
            }
            if headers.endStream { requestComplete(frame.streamID, context: context) }
        case .data(let data):
            guard streams[frame.streamID] != nil, case .byteBuffer(let chunk) = data.data else { return }
            streams[frame.streamID]?.body.appendFrameBytes(chunk)
            if data.endStream { requestComplete(frame.streamID, context: context) }
        case .ping(_, ack: false):
            // NIO's HTTP/2 handler has already queued the acknowledgement.
            connection.loopState.pings += 1
        default:
            break
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let closed = event as? StreamClosedEvent, streams.removeValue(forKey: closed.streamID) != nil {
            connection.streamClosed()
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func requestComplete(_ streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        guard !connection.isResetting, let stream = streams[streamID] else { return }
        // The request is complete: only its presence is needed from here on.
        streams[streamID] = Stream()
        let shared = connection.shared
        let loopState = connection.loopState
        let faults = loopState.faults
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

        let requestHeaders = stream.headers ?? HPACKHeaders()
        let payload = stream.body ?? ByteBuffer()
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
        if let delay = loopState.latency.sampleNanoseconds(using: &loopState.random) {
            context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(delay)) {
                self.respond(
                    streamID, context: context, outcome: outcome, apnsID: responseAPNsID,
                    requestHeaders: requestHeaders, payload: payload)
            }
        } else {
            respond(
                streamID, context: context, outcome: outcome, apnsID: responseAPNsID, requestHeaders: requestHeaders,
                payload: payload)
        }
    }

    private func injectedFailure(faults: APNsSimulatorFaults, loopState: APNsSimulatorLoopState) -> APNsReason? {
        if faults.rejectsProviderTokens { return .invalidProviderToken }
        let rates: [(Double, APNsReason)] = [
            (faults.internalServerErrorRate, .internalServerError), (faults.serviceUnavailableRate, .serviceUnavailable),
            (faults.shutdownRate, .shutdown), (faults.tooManyRequestsRate, .tooManyRequests),
        ]
        guard rates.contains(where: { $0.0 > 0 }) else { return nil }
        var draw = Double.random(in: 0..<1, using: &loopState.random)
        for (rate, reason) in rates {
            if draw < rate { return reason }
            draw -= rate
        }
        return nil
    }

    /// Answers a stream that is still open (the client may have reset it meanwhile).
    private func respond(
        _ streamID: HTTP2StreamID, context: ChannelHandlerContext, outcome: Outcome, apnsID: String,
        requestHeaders: HPACKHeaders, payload: ByteBuffer
    ) {
        guard !connection.isResetting, streams[streamID] != nil, context.channel.isActive else { return }
        let loopState = connection.loopState
        let configuration = connection.shared.configuration
        switch outcome {
        case .success(let notification):
            var headers = HPACKHeaders()
            headers.add(name: ":status", value: "200")
            headers.add(name: "apns-id", value: apnsID, indexing: .nonIndexable)
            let promise = context.eventLoop.makePromise(of: Void.self)
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: true)))),
                promise: promise)
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
            var headers = HPACKHeaders()
            headers.add(name: ":status", value: Self.statusStrings[status] ?? String(status))
            headers.add(name: "apns-id", value: apnsID, indexing: .nonIndexable)
            headers.add(name: "content-type", value: "application/json")
            var json = #"{"reason":"\#(rejection.reason.rawValue)""#
            if let timestamp = rejection.timestamp { json += #","timestamp":\#(timestamp)"# }
            json += "}"
            context.write(
                wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: false)))),
                promise: nil)
            context.write(
                wrapOutboundOut(
                    HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(ByteBuffer(string: json)), endStream: true)))),
                promise: nil)
            loopState.rejections[rejection.reason.rawValue, default: 0] += 1
            if configuration.recordsRequests {
                loopState.records.append(
                    APNsSimulatorRequestRecord(
                        deviceToken: rejection.deviceToken, topic: requestHeaders.first(name: "apns-topic"),
                        pushType: nil, priority: nil, expiration: nil, collapseID: nil,
                        requestAPNsID: requestHeaders.first(name: "apns-id"), responseAPNsID: apnsID,
                        status: status, reason: rejection.reason.rawValue, payloadBytes: payload.readableBytes))
            }
        }
        flushes.flushSoon(context)
    }
}
