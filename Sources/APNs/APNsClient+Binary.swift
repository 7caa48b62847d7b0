import APNsCore
import Foundation
import HTTP2Frames
import NIOCore
import NIOSSL
import Synchronization

/// The binary interface's idle connections (by credential and environment) and the next frame
/// identifier.
struct BinaryState: ~Copyable {
    var idle: [String: [APNsBinaryConnection]] = [:]
    var nextIdentifier: UInt32 = 1
}

extension APNsClient {
    /// Sends `notification` to every device of `tokens` over APNs's legacy binary interface
    /// (``APNsService/binaryGateway``), with a client certificate, and calls `onResult` once
    /// per device, as ``send(_:to:onResult:)`` does over HTTP/2.
    ///
    /// Frames are written back to back on one connection, ``APNsClientConfiguration/binarySliceFrames``
    /// at a time; after each slice the gateway has ``APNsClientConfiguration/binaryQuietPeriod``
    /// to refuse one (``APNsBinarySendWindow``):
    /// the frames before a refused one were taken, it gets its status, and the frames after it
    /// are written again on a new connection. A connection that closes without an error response
    /// has every frame written on it written again, at most
    /// ``APNsClientConfiguration/binaryMaxWrites`` times. Answers read as APNs's HTTP/2 answers
    /// would (``binaryResponse(_:writes:)``): taken is 200, `InvalidToken` a 400 `BadDeviceToken`.
    ///
    /// `payloads`, when given, holds each device's own payload, as in ``send(_:to:payloads:onResult:)``.
    public func sendOverBinaryInterface(
        _ notification: APNsRequest, to tokens: [DeviceToken], payloads: [ByteBuffer]? = nil,
        onResult: @escaping @Sendable (Int, Result<APNsResponse, APNsError>) -> Void
    ) async {
        guard !tokens.isEmpty else { return }
        precondition(payloads == nil || payloads!.count == tokens.count, "one payload per token")
        let key = "\(notification.credential.id)/\(notification.environment.rawValue)"
        let endpoint = configuration.endpoint(for: notification.environment, service: .binaryGateway)
        let sslContext: NIOSSLContext
        do throws(APNsError) {
            guard try notification.credential.tlsIdentity() != nil else {
                throw APNsError(.invalidCredential, underlying: BinaryInterfaceError.certificateRequired)
            }
            sslContext = try makeSSLContext(for: notification.credential, http2: false)
        } catch {
            for index in tokens.indices { onResult(index, .failure(error)) }
            return
        }
        let expiration = UInt32(clamping: notification.expiration ?? (Int64(Date().timeIntervalSince1970) + Self.binaryDefaultLifetime))
        let priority = UInt8(clamping: notification.priority?.rawValue ?? 10)
        var writes = [Int](repeating: 0, count: tokens.count)
        var queue = Array(tokens.indices)
        while !queue.isEmpty {
            let connection: APNsBinaryConnection
            do {
                connection = try await binaryConnection(key: key, endpoint: endpoint, sslContext: sslContext)
            } catch {
                for index in queue { onResult(index, .failure(error)) }
                return
            }
            var window = APNsBinarySendWindow<Int>()
            var bytes = ByteBuffer()
            let slice = Array(queue.prefix(configuration.binarySliceFrames))
            queue.removeFirst(slice.count)
            let first = binary.withLock { state in
                defer { state.nextIdentifier &+= UInt32(slice.count) }
                return state.nextIdentifier
            }
            let now = ContinuousClock.now
            for (offset, index) in slice.enumerated() {
                let identifier = first &+ UInt32(offset)
                APNsBinaryFrame.writeNotification(
                    token: tokens[index].bytes, payload: payloads?[index] ?? notification.payload, identifier: identifier, expiration: expiration,
                    priority: priority, into: &bytes)
                window.written(index, identifier: identifier, at: now)
                writes[index] += 1
            }
            let event: APNsBinaryConnection.Event?
            do {
                try await connection.write(bytes)
                event = await connection.event(within: configuration.binaryQuietPeriod)
            } catch {
                event = .closed
            }
            switch event {
            case nil:
                for index in window.settle(writtenBefore: .now) { onResult(index, .success(Self.binaryResponse(.noErrors, writes: writes[index]))) }
                binary.withLock { $0.idle[key, default: []].append(connection) }
            case .errorResponse(let status, let identifier):
                connection.close()
                let verdict = window.errorResponse(status: status, identifier: identifier)
                for index in verdict.taken { onResult(index, .success(Self.binaryResponse(.noErrors, writes: writes[index]))) }
                if let refused = verdict.refused { onResult(refused, .success(Self.binaryResponse(status, writes: writes[refused]))) }
                queue.insert(contentsOf: verdict.writeAgain, at: 0)
            case .closed:
                connection.close()
                var again: [Int] = []
                for index in window.closed() {
                    if writes[index] >= configuration.binaryMaxWrites {
                        onResult(index, .failure(APNsError(.connectionLost)))
                    } else {
                        again.append(index)
                    }
                }
                queue.insert(contentsOf: again, at: 0)
            }
        }
    }

    /// The lifetime of a notification that names no expiration, on the binary interface (where
    /// 0 means "deliver once or never", not "APNs's default"): 30 days.
    static let binaryDefaultLifetime: Int64 = 30 * 86_400

    /// A binary interface status as the answer APNs's HTTP/2 interface gives for the same fault,
    /// so the pipeline settles both alike: `InvalidToken` and `InvalidTokenSize` are token
    /// rejections (`BadDeviceToken`: kept aside, never removed; the feedback service says which
    /// tokens are gone), payload and topic faults are misconfigurations, `ProcessingError` and an
    /// unknown status are retryable.
    package static func binaryResponse(_ status: APNsBinaryStatus, writes: Int) -> APNsResponse {
        let answer: (Int, APNsReason?) =
            switch status {
            case .noErrors, .shutdown: (200, nil)
            case .invalidToken, .invalidTokenSize, .missingDeviceToken: (400, .badDeviceToken)
            case .missingPayload: (400, .payloadEmpty)
            case .invalidPayloadSize: (413, .payloadTooLarge)
            case .missingTopic, .invalidTopicSize: (400, .missingTopic)
            case .invalidFrameItemID: (400, .unknown(status.reason))
            case .processingError, .unknown: (500, .unknown(status.reason))
            }
        return APNsResponse(status: answer.0, apnsID: nil, reason: answer.1, timestamp: nil, attempts: max(writes, 1))
    }

    /// An idle connection of `key`, or a new one.
    private func binaryConnection(
        key: String, endpoint: APNsClientConfiguration.Endpoint, sslContext: NIOSSLContext
    ) async throws(APNsError) -> APNsBinaryConnection {
        while let idle = binary.withLock({ $0.idle[key]?.popLast() }) {
            if idle.channel.isActive { return idle }
        }
        return try await APNsBinaryConnection.connect(
            eventLoop: eventLoopGroup.next(), endpoint: endpoint, sslContext: sslContext, timeout: configuration.connectTimeout)
    }

    /// Reads the feedback service of `environment` with `credential`: every (time, token) it
    /// lists, until it closes the connection. The time is when APNs found the token no longer
    /// valid (seconds since 1970).
    public func readFeedbackService(credential: APNsCredential, environment: APNsEnvironment) async throws(APNsError) -> [(
        time: Int64, token: DeviceToken
    )] {
        let sslContext = try makeSSLContext(for: credential, http2: false)
        let endpoint = configuration.endpoint(for: environment, service: .feedbackService)
        let connection = try await APNsBinaryConnection.connect(
            eventLoop: eventLoopGroup.next(), endpoint: endpoint, sslContext: sslContext, timeout: configuration.connectTimeout)
        var bytes = await connection.readUntilClosed()
        var tuples: [(Int64, DeviceToken)] = []
        while let (time, token) = APNsBinaryFrame.readFeedbackTuple(from: &bytes) {
            guard let parsed = try? DeviceToken(bytes: token) else { continue }
            tuples.append((Int64(time), parsed))
        }
        return tuples
    }
}

/// Why the binary interface cannot be used.
enum BinaryInterfaceError: Error, CustomStringConvertible {
    case certificateRequired

    var description: String {
        "the binary interface authenticates with a client certificate; a signing key (provider token) is for HTTP/2 only"
    }
}
