import APNsCore
import Atomics
import Foundation
import HTTP2Frames
import NIOCore
import NIOHPACK

/// Serves the requests of one connection: applies the faults, validates each request as APNs
/// does, and answers with APNs's status, `apns-id` and JSON reason, now or after the configured
/// latency. ``APNsSimulatorConnection`` hands it each complete request and writes its answers.
final class APNsSimulatorRequestHandler {
    private typealias Outcome = Result<APNsSimulatorRequestValidator.Notification, APNsSimulatorRequestValidator.Rejection>

    /// Weak: an answer scheduled after the configured latency may come due after the connection
    /// (the channel handler that owns this) is gone; it is dropped then.
    private weak var owner: APNsSimulatorConnection?

    init(connection: APNsSimulatorConnection) {
        self.owner = connection
    }

    func requestComplete(streamID: UInt32, headers requestHeaders: HPACKHeaders, body payload: ByteBuffer, context: ChannelHandlerContext) {
        guard let connection = owner, !connection.isResetting else { return }
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

        let now = APNsSimulatorSharedState.nowMilliseconds()
        if let path = requestHeaders.first(name: ":path"), APNsSimulatorChannels.serves(path: path) {
            answerChannelRequest(streamID, headers: requestHeaders, body: payload, nowMilliseconds: now)
            return
        }
        var outcome = shared.validator.validate(
            headers: requestHeaders, body: payload, authentication: &connection.authentication, nowMilliseconds: now)
        // A request with a valid token lifts the limit of one stream, whatever the device's verdict
        // (410 Unregistered, 429 for a device sent too much); a failure injected as the server's own
        // trouble does not.
        var liftsStreamLimit = connection.authentication.lastRequestAuthenticated
        if case .success(let notification) = outcome {
            if let reason = injectedFailure(faults: faults, loopState: loopState) {
                outcome = .failure(.init(reason, deviceToken: notification.deviceToken))
                liftsStreamLimit = false
            } else if shared.exceedsDeviceRate(notification.deviceToken, nowMilliseconds: now) {
                outcome = .failure(.init(.tooManyRequests, deviceToken: notification.deviceToken))
            }
        }
        if liftsStreamLimit { connection.advertiseFullStreamLimit() }
        let responseAPNsID = requestHeaders.first(name: "apns-id") ?? APNsID.random(using: &loopState.random).uuidString
        if let delay = loopState.latency.sampleNanoseconds(using: &loopState.random) {
            context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(delay)) {
                self.respond(streamID, outcome: outcome, apnsID: responseAPNsID, requestHeaders: requestHeaders, payload: payload)
            }
        } else {
            respond(streamID, outcome: outcome, apnsID: responseAPNsID, requestHeaders: requestHeaders, payload: payload)
        }
    }

    /// A channel management request or a broadcast: answered at once, after the injected
    /// failures a device request gets.
    private func answerChannelRequest(_ streamID: UInt32, headers: HPACKHeaders, body: ByteBuffer, nowMilliseconds: Int64) {
        guard let connection = owner else { return }
        let shared = connection.shared
        let loopState = connection.loopState
        var answer: APNsSimulatorChannels.Answer
        if let reason = injectedFailure(faults: loopState.faults, loopState: loopState) {
            answer = .refused(reason, requestID: headers.first(name: "apns-request-id") ?? UUID().uuidString)
        } else {
            answer = shared.channels.handle(headers: headers, body: body, validator: shared.validator) {
                shared.validator.authenticate(
                    headers: headers, authentication: &connection.authentication, nowSeconds: nowMilliseconds / 1000)
            }
        }
        if answer.reason == nil {
            connection.advertiseFullStreamLimit()
        }
        if answer.status == 429 || answer.status == 503, let retryAfter = loopState.faults.retryAfter {
            answer.headers.append(("retry-after", retryAfter))
        }
        guard
            connection.respond(
                streamID: streamID, apnsID: nil,
                .channel(status: answer.status, headers: answer.headers, body: answer.body.map { ByteBuffer(string: $0) }))
        else { return }
        if let reason = answer.reason {
            loopState.rejections[reason.rawValue, default: 0] += 1
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
        _ streamID: UInt32, outcome: Outcome, apnsID: String, requestHeaders: HPACKHeaders, payload: ByteBuffer
    ) {
        guard let connection = owner else { return }
        let loopState = connection.loopState
        let configuration = connection.shared.configuration
        switch outcome {
        case .success(let notification):
            let key =
                configuration.tracksDuplicates
                ? APNsSimulatorLoopState.NotificationKey(
                    deviceToken: notification.deviceToken,
                    apnsIDOrPayloadHash: notification.apnsID?.lowercased() ?? "payload:\(payload.hashValue)",
                    collapseID: notification.collapseID)
                : nil
            guard connection.respond(streamID: streamID, apnsID: apnsID, .accepted(key: key)) else { return }
            if configuration.recordsRequests {
                loopState.records.append(
                    APNsSimulatorRequestRecord(
                        deviceToken: notification.deviceToken, topic: notification.topic,
                        pushType: notification.pushType.rawValue, priority: notification.priority,
                        expiration: notification.expiration, collapseID: notification.collapseID,
                        requestAPNsID: notification.apnsID, responseAPNsID: apnsID, status: 200, reason: nil,
                        payloadBytes: payload.readableBytes, payload: String(buffer: payload)))
            }
        case .failure(let rejection):
            let status = rejection.reason.documentedStatus ?? 400
            var json = #"{"reason":"\#(rejection.reason.rawValue)""#
            if let timestamp = rejection.timestamp { json += #","timestamp":\#(timestamp)"# }
            json += "}"
            let retryAfter = status == 429 || status == 503 ? loopState.faults.retryAfter : nil
            guard
                connection.respond(
                    streamID: streamID, apnsID: apnsID, .rejected(status: status, body: ByteBuffer(string: json), retryAfter: retryAfter))
            else {
                return
            }
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
    }
}
