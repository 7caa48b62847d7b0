import NIOCore

/// APNs's legacy binary interface (gateway.push.apple.com:2195) and feedback service
/// (feedback.push.apple.com:2196), byte for byte: the notification frame of the enhanced format
/// (command 2), the error response (command 8), and the feedback tuple. Pure: encoding and
/// decoding only.
///
/// A notification frame: command `2` · frame length (u32) · items, each an item id (u8), its
/// length (u16) and its data: 1 device token, 2 payload (JSON), 3 notification identifier (u32),
/// 4 expiration (u32, seconds since 1970; 0 delivers once or never), 5 priority (u8, 10 or 5).
/// Integers are big-endian.
package enum APNsBinaryFrame {
    package static let notificationCommand: UInt8 = 2
    package static let errorResponseCommand: UInt8 = 8
    /// The error response's size: command, status, identifier.
    package static let errorResponseSize = 6
    /// The longest payload the binary interface takes.
    package static let maxPayloadBytes = 2048

    /// Appends one notification frame.
    package static func writeNotification(
        token: [UInt8], payload: ByteBuffer, identifier: UInt32, expiration: UInt32, priority: UInt8, into buffer: inout ByteBuffer
    ) {
        let itemsLength = (3 + token.count) + (3 + payload.readableBytes) + (3 + 4) + (3 + 4) + (3 + 1)
        buffer.reserveCapacity(minimumWritableBytes: 5 + itemsLength)
        buffer.writeInteger(notificationCommand)
        buffer.writeInteger(UInt32(itemsLength))
        buffer.writeInteger(UInt8(1))
        buffer.writeInteger(UInt16(token.count))
        buffer.writeBytes(token)
        buffer.writeInteger(UInt8(2))
        buffer.writeInteger(UInt16(payload.readableBytes))
        buffer.writeImmutableBuffer(payload)
        buffer.writeInteger(UInt8(3))
        buffer.writeInteger(UInt16(4))
        buffer.writeInteger(identifier)
        buffer.writeInteger(UInt8(4))
        buffer.writeInteger(UInt16(4))
        buffer.writeInteger(expiration)
        buffer.writeInteger(UInt8(5))
        buffer.writeInteger(UInt16(1))
        buffer.writeInteger(priority)
    }

    /// A notification frame as the gateway reads it.
    package struct Notification: Hashable, Sendable {
        package var token: [UInt8]?
        package var payload: [UInt8]?
        package var identifier: UInt32?
        package var expiration: UInt32?
        package var priority: UInt8?
        /// An item id the format does not define, when the frame held one.
        package var unknownItem: UInt8?
    }

    /// What reading the next frame of a stream came to.
    package enum Read: Hashable, Sendable {
        /// More bytes are needed.
        case incomplete
        /// A whole notification frame (consumed).
        case notification(Notification)
        /// Bytes that are not a notification frame (an unknown command): the stream cannot go on.
        case malformed(command: UInt8)
    }

    /// Reads one frame from the front of `buffer`, consuming it when whole.
    package static func readNotification(from buffer: inout ByteBuffer) -> Read {
        guard let command = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return .incomplete }
        guard command == notificationCommand else { return .malformed(command: command) }
        guard let length = buffer.getInteger(at: buffer.readerIndex + 1, as: UInt32.self),
            buffer.readableBytes >= 5 + Int(length)
        else { return .incomplete }
        buffer.moveReaderIndex(forwardBy: 5)
        var items = buffer.readSlice(length: Int(length))!
        var notification = Notification()
        while items.readableBytes > 0 {
            guard let id = items.readInteger(as: UInt8.self), let size = items.readInteger(as: UInt16.self),
                let data = items.readBytes(length: Int(size))
            else {
                notification.unknownItem = 0
                break
            }
            switch id {
            case 1: notification.token = data
            case 2: notification.payload = data
            case 3 where data.count == 4: notification.identifier = data.reduce(0) { $0 << 8 | UInt32($1) }
            case 4 where data.count == 4: notification.expiration = data.reduce(0) { $0 << 8 | UInt32($1) }
            case 5 where data.count == 1: notification.priority = data[0]
            default: notification.unknownItem = id
            }
        }
        return .notification(notification)
    }

    /// Appends an error response.
    package static func writeErrorResponse(status: APNsBinaryStatus, identifier: UInt32, into buffer: inout ByteBuffer) {
        buffer.writeInteger(errorResponseCommand)
        buffer.writeInteger(status.rawValue)
        buffer.writeInteger(identifier)
    }

    /// Reads an error response from the front of `buffer`: `nil` while incomplete; a response
    /// whose command is not 8 reads as ``APNsBinaryStatus/unknown``.
    package static func readErrorResponse(from buffer: inout ByteBuffer) -> (status: APNsBinaryStatus, identifier: UInt32)? {
        guard buffer.readableBytes >= errorResponseSize else { return nil }
        let command = buffer.readInteger(as: UInt8.self)!
        let status = buffer.readInteger(as: UInt8.self)!
        let identifier = buffer.readInteger(as: UInt32.self)!
        guard command == errorResponseCommand else { return (.unknown, identifier) }
        return (APNsBinaryStatus(rawValue: status) ?? .unknown, identifier)
    }

    /// Appends one feedback tuple: time (u32, seconds since 1970), token length (u16), token.
    package static func writeFeedbackTuple(time: UInt32, token: [UInt8], into buffer: inout ByteBuffer) {
        buffer.writeInteger(time)
        buffer.writeInteger(UInt16(token.count))
        buffer.writeBytes(token)
    }

    /// Reads one feedback tuple from the front of `buffer`; `nil` while incomplete.
    package static func readFeedbackTuple(from buffer: inout ByteBuffer) -> (time: UInt32, token: [UInt8])? {
        guard let length = buffer.getInteger(at: buffer.readerIndex + 4, as: UInt16.self),
            buffer.readableBytes >= 6 + Int(length)
        else { return nil }
        let time = buffer.readInteger(as: UInt32.self)!
        buffer.moveReaderIndex(forwardBy: 2)
        return (time, buffer.readBytes(length: Int(length))!)
    }
}

/// The status of a binary interface error response.
package enum APNsBinaryStatus: UInt8, Hashable, Sendable, CaseIterable {
    case noErrors = 0
    case processingError = 1
    case missingDeviceToken = 2
    case missingTopic = 3
    case missingPayload = 4
    case invalidTokenSize = 5
    case invalidTopicSize = 6
    case invalidPayloadSize = 7
    case invalidToken = 8
    /// The gateway is closing the connection for maintenance; the identified notification was
    /// the last one it took, so everything after it is to be sent again.
    case shutdown = 10
    case invalidFrameItemID = 128
    case unknown = 255

    /// The name PushFleet reports the status by (a job's failure reason, the feedback reason).
    package var reason: String {
        switch self {
        case .noErrors: "NoErrors"
        case .processingError: "ProcessingError"
        case .missingDeviceToken: "MissingDeviceToken"
        case .missingTopic: "MissingTopic"
        case .missingPayload: "MissingPayload"
        case .invalidTokenSize: "InvalidTokenSize"
        case .invalidTopicSize: "InvalidTopicSize"
        case .invalidPayloadSize: "InvalidPayloadSize"
        case .invalidToken: "InvalidToken"
        case .shutdown: "Shutdown"
        case .invalidFrameItemID: "InvalidFrameItemId"
        case .unknown: "Unknown"
        }
    }
}
