import APNsCore
import Foundation
public import PushCore
import PushStore

/// The online channel's frames: JSON text objects with a string `type`. Pure.
///
/// From the gateway: `welcome` once the connection is authenticated (its gateway, connection
/// number and heartbeat settings), `push` for each notification of an online job (its message
/// `id`, `job`, `push-type` and `notification`; `"replay":true` when it comes from the device's
/// inbox as it connects), `error` for a message it does not know
/// (the connection stays). From the app: pongs (WebSocket control frames) and `ack` with a push's
/// `id` once the app has it.
public enum GatewayMessages {
    /// A client's message, as the gateway acts on it.
    public enum ClientMessage: Equatable, Sendable {
        /// `{"type":"ack","id":…}`.
        case ack(id: String)
        /// Any other type, answered with an error frame.
        case unknown(type: String)
        /// An `ack` without a string `id`.
        case ackWithoutID
    }

    /// A client's text frame, or why it is not a PushFleet message.
    public static func parse(_ text: [UInt8]) -> Result<ClientMessage, GatewayClose> {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: Data(text))
        } catch {
            return .failure(.badMessage("not JSON"))
        }
        guard let object = value.objectValue else { return .failure(.badMessage("not a JSON object")) }
        guard let type = object["type"]?.stringValue else { return .failure(.badMessage("no string 'type'")) }
        guard type == "ack" else { return .success(.unknown(type: type)) }
        guard let id = object["id"]?.stringValue else { return .success(.ackWithoutID) }
        return .success(.ack(id: id))
    }

    /// The message id of the send at `position` of job `jobID`: what the app acks.
    public static func messageID(jobID: String, position: UInt32) -> String {
        InboxMessage(jobID: jobID, position: position).id
    }

    /// The `push` frames of one `push.online` message,
    /// `{"type":"push","id":…,"job":…,"push-type":…,"notification":{…}}` (`notification` the job's
    /// payload as APNs would carry it; `"replay":true` after it for an inbox replay): everything
    /// but the id is serialized once per message, not once per device.
    public struct PushFrames: Sendable {
        private static let head = Array(#"{"type":"push","id":"#.utf8)
        /// `,"job":…}`: the frame after its id.
        private let tail: [UInt8]

        public init(jobID: String, job: PushJob, replay: Bool = false) {
            var rest: JSONObject = [
                "job": .string(jobID), "push-type": .string(job.headers.pushType.rawValue), "notification": job.notification.jsonValue,
            ]
            if replay { rest["replay"] = true }
            tail = Array(",".utf8) + JSONValue.object(rest).compactData().dropFirst()
        }

        /// The frame of the send with message id `id`.
        public func frame(id: String) -> [UInt8] {
            Self.head + JSONValue.string(id).compactData() + tail
        }
    }

    /// `{"type":"welcome",…}`.
    public static func welcome(gateway: String, connection: UInt64, schedule: HeartbeatSchedule) -> [UInt8] {
        let value: JSONValue = [
            "type": "welcome", "gateway": .string(gateway), "connection": .string(String(connection)),
            "ping-interval-seconds": .number(JSONNumber(Int(schedule.pingInterval.components.seconds))),
            "idle-timeout-seconds": .number(JSONNumber(Int(schedule.idleTimeout.components.seconds))),
        ]
        return Array(value.compactData())
    }

    /// `{"type":"error","reason":…}`.
    public static func error(_ reason: String) -> [UInt8] {
        let value: JSONValue = ["type": "error", "reason": .string(reason)]
        return Array(value.compactData())
    }
}
